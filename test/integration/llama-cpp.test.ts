import { createServer, type Server } from 'node:http';
import { createReadStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { isAlive, processPids, waitFor } from './harness/processes.js';
import { jsonEvents, readSse } from './harness/sse-client.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyGguf, tinyGgufRegistration, type TinyGguf } from './harness/tiny-models.js';

/** Pids of live llama.cpp runtimes (the Node runtime) whose command line mentions `marker`. */
function llamaRuntimePids(marker: string): Promise<number[]> {
  return processPids(({ pid, cmdline }) => cmdline.includes('llama-runtime') && cmdline.includes(marker) && isAlive(pid));
}

// The tiny test Llama as GGUF files, served by the llama.cpp engine (node-llama-cpp's
// prebuilt CPU binary) through HTTP and the official OpenAI SDK.
describe('llama.cpp engine: GGUF models', () => {
  let server: TestServer;
  let work: string;
  let gguf: TinyGguf;
  let api: ReturnType<typeof client>;
  let sdk: OpenAI;
  const greedy = { temperature: 0 } as const;

  beforeAll(async () => {
    work = await makeHome('hangar-gguf-');
    gguf = tinyGguf();
    server = await startServer();
    api = client(server.url);
    const reg = await api.post('/v1/model_registrations/LLM', tinyGgufRegistration('tiny-gguf', gguf));
    expect(reg.status, reg.text).toBe(200);
    const launches = await Promise.all([
      // The registered folder of GGUF files; the launch's quantization picks the file.
      api.post('/v1/models', { model_name: 'tiny-gguf', model_engine: 'llama.cpp', model_format: 'ggufv2', quantization: 'q8_0', model_uid: 'q8' }),
      // A launch's model_path naming one .gguf file.
      api.post('/v1/models', { model_name: 'tiny-gguf', model_engine: 'llama.cpp', model_format: 'ggufv2', quantization: 'f32', model_uid: 'f32', model_path: gguf.files.f32 }),
      api.post('/v1/models', { model_name: 'tiny-gguf', model_engine: 'Transformers', model_uid: 'hf' }),
    ]);
    for (const launch of launches) expect(launch.status, launch.text).toBe(200);
    sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('lists llama.cpp among the engines with its format and quantizations, and describes the instance', async () => {
    const engines = await api.get('/v1/engines/tiny-gguf');
    expect(engines.status, engines.text).toBe(200);
    expect(engines.body['llama.cpp']).toEqual([expect.objectContaining({ model_format: 'ggufv2', quantizations: expect.arrayContaining(['q8_0', 'f32']) })]);
    const builtin = await api.get('/v1/engines/qwen2.5-instruct');
    expect(builtin.body['llama.cpp']).toEqual(expect.arrayContaining([expect.objectContaining({ model_format: 'ggufv2', model_size_in_billions: '0_5', quantizations: expect.arrayContaining(['q4_k_m']) })]));
    const model = await api.get('/v1/models/q8');
    expect(model.body).toMatchObject({ model_engine: 'llama.cpp', model_format: 'ggufv2', quantization: 'q8_0', context_length: 512 });
  });

  it('answers greedily with the same prompt and the same text as the Transformers engine on the same float weights', async () => {
    const messages = [
      { role: 'system' as const, content: 'You are brief.' },
      { role: 'user' as const, content: 'Tell me a story about the quick brown fox' },
    ];
    const [hf, f32] = (await Promise.all(['hf', 'f32'].map((model) => sdk.chat.completions.create({ model, messages, max_tokens: 24, ...greedy })))) as [OpenAI.ChatCompletion, OpenAI.ChatCompletion];
    expect(f32.usage!.prompt_tokens).toBe(hf.usage!.prompt_tokens);
    expect(f32.choices[0]!.message.content).toBe(hf.choices[0]!.message.content);
    expect(f32.usage!.completion_tokens).toBe(hf.usage!.completion_tokens);
    // Completions too: a plain prompt tokenizes the same way.
    const [hfText, f32Text] = await Promise.all([api.post('/v1/completions', { model: 'hf', prompt: 'Once upon a time', max_tokens: 16, temperature: 0 }), api.post('/v1/completions', { model: 'f32', prompt: 'Once upon a time', max_tokens: 16, temperature: 0 })]);
    expect(f32Text.body.choices[0].text).toBe(hfText.body.choices[0].text);
    expect(f32Text.body.usage).toEqual(hfText.body.usage);
    // A final message continued (vLLM's continue_final_message, Anthropic's prefill): the same prompt and text on both engines.
    const prefilled = { messages: [...messages, { role: 'assistant', content: 'Once upon a time' }], max_tokens: 16, temperature: 0 };
    const [hfMore, f32More, newTurn] = await Promise.all([
      api.post('/v1/chat/completions', { model: 'hf', ...prefilled, continue_final_message: true }),
      api.post('/v1/chat/completions', { model: 'f32', ...prefilled, continue_final_message: true }),
      api.post('/v1/chat/completions', { model: 'f32', ...prefilled }),
    ]);
    expect(f32More.status, f32More.text).toBe(200);
    expect(f32More.body.choices[0].message.content).toBe(hfMore.body.choices[0].message.content);
    expect(f32More.body.usage).toEqual(hfMore.body.usage);
    // No end of turn after the prefill, and no new turn opened.
    expect(f32More.body.usage.prompt_tokens).toBeLessThan(newTurn.body.usage.prompt_tokens);
  });

  it('streams the text it answers without streaming, ending with usage', async () => {
    const params = { model: 'q8', messages: [{ role: 'user' as const, content: 'Hello there, how are you?' }], max_tokens: 16, ...greedy };
    const whole = await sdk.chat.completions.create(params);
    expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
    const stream = await sdk.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: unknown = null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.choices.length > 0) text += chunk.choices[0]!.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(2);
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(usage).toEqual(whole.usage);
  });

  it('serves completions with echo, a stop string and the max_tokens cap', async () => {
    const base = { model: 'q8', prompt: 'The quick brown fox', max_tokens: 20, temperature: 0 };
    const full = await api.post('/v1/completions', base);
    expect(full.status, full.text).toBe(200);
    const text: string = full.body.choices[0].text;
    expect(full.body.usage.completion_tokens).toBeLessThanOrEqual(20);
    const echoed = await api.post('/v1/completions', { ...base, echo: true });
    expect(echoed.body.choices[0].text).toBe(`The quick brown fox${text}`);
    const stop = text.slice(4, 7);
    const cut = await api.post('/v1/completions', { ...base, stop: [stop] });
    expect(cut.body.choices[0].text).toBe(text.slice(0, text.indexOf(stop)));
    expect(cut.body.choices[0].finish_reason).toBe('stop');
    expect(cut.body.choices[0].stop_reason).toBe(stop);
    const short = await api.post('/v1/completions', { ...base, max_tokens: 3 });
    expect([short.body.usage.completion_tokens, short.body.choices[0].finish_reason, short.body.choices[0].stop_reason]).toEqual([3, 'length', null]);
  });

  it('honours seeds and sampling fields: the same seed gives the same text, penalties and logit_bias change it', async () => {
    const body = { model: 'q8', prompt: 'Once upon a time', max_tokens: 12, temperature: 1, top_p: 0.9, top_k: 40, min_p: 0.01, seed: 42 };
    const first = await api.post('/v1/completions', body);
    const again = await api.post('/v1/completions', body);
    expect(again.body.choices[0].text).toBe(first.body.choices[0].text);
    const greedyText = (await api.post('/v1/completions', { model: 'q8', prompt: 'Once upon a time', max_tokens: 12, temperature: 0 })).body.choices[0].text;
    // The bias makes the end token the only choice: one token, finish "stop".
    const ended = await api.post('/v1/completions', { model: 'q8', prompt: 'Once upon a time', max_tokens: 12, temperature: 0, logit_bias: { [String(gguf.eos_token_id)]: 100 } });
    expect([ended.body.choices[0].finish_reason, ended.body.usage.completion_tokens], ended.text).toEqual(['stop', 1]);
    const ignored = await api.post('/v1/completions', { model: 'q8', prompt: 'Once upon a time', max_tokens: 5, temperature: 0, logit_bias: { [String(gguf.eos_token_id)]: 100 }, ignore_eos: true });
    expect([ignored.body.choices[0].finish_reason, ignored.body.usage.completion_tokens], ignored.text).toEqual(['length', 5]);
    // Penalties count generated tokens: the greedy text changes once it would repeat one.
    const long = { model: 'q8', prompt: 'Once upon a time', max_tokens: 40, temperature: 0 };
    const plain = (await api.post('/v1/completions', long)).body.choices[0].text;
    expect(plain.startsWith(greedyText)).toBe(true);
    for (const penalty of [{ frequency_penalty: 2 }, { presence_penalty: 2 }, { repetition_penalty: 1.8 }]) {
      const penalized = await api.post('/v1/completions', { ...long, ...penalty });
      expect(penalized.status, penalized.text).toBe(200);
      expect(penalized.body.choices[0].text, JSON.stringify(penalty)).not.toBe(plain);
    }
    const outside = await api.post('/v1/completions', { model: 'q8', prompt: 'hi', max_tokens: 2, logit_bias: { '999999': 5 } });
    expect(outside.status).toBe(400);
    expect(outside.body.error.message).toContain('outside this model\'s vocabulary');
  });

  it('reports log-probabilities in the chat shape', async () => {
    const res = await api.post('/v1/chat/completions', { model: 'q8', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 3 });
    expect(res.status, res.text).toBe(200);
    const content = res.body.choices[0].logprobs.content;
    expect(content).toHaveLength(res.body.usage.completion_tokens);
    for (const entry of content) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.top_logprobs).toHaveLength(3);
      // Greedy: the chosen token is the likeliest.
      expect(entry.logprob).toBeCloseTo(entry.top_logprobs[0].logprob, 6);
    }
    // Tokens that split characters (the grammar makes the model write them): each entry
    // carries the token's own bytes, so together they are the text's, and OpenAI's
    // `bytes:\xNN` spelling, never a bare U+FFFD.
    const split = await api.post('/v1/chat/completions', { model: 'q8', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20, logprobs: true, top_logprobs: 2, grammar: 'root ::= "é😀日本"' });
    expect(split.status, split.text).toBe(200);
    const entries = split.body.choices[0].logprobs.content as Array<{ token: string; bytes: number[] }>;
    expect(split.body.choices[0].message.content).toBe('é😀日本');
    expect(Buffer.from(entries.flatMap((e) => e.bytes)).toString('utf8')).toBe('é😀日本');
    expect(entries.some((e) => /^bytes:(\\x[0-9a-f]{2})+$/.test(e.token))).toBe(true);
    expect(entries.every((e) => !e.token.includes('\uFFFD'))).toBe(true);
  });

  it('answers response_format json_schema with JSON that validates against the schema, through a llama.cpp grammar', async () => {
    // No free-form strings: the random tiny model seldom closes one within the token
    // budget, and the bytes it writes are often not UTF-8 (llama.cpp's grammar counts
    // them one way, the decoded text, U+FFFD each, another).
    const schema = {
      type: 'object',
      properties: {
        name: { enum: ['Ann', 'Bob'] },
        age: { type: 'integer' },
        color: { enum: ['red', 'green', 'blue'] },
        tags: { type: 'array', items: { enum: ['x', 'y'] }, minItems: 1, maxItems: 3 },
        ok: { type: 'boolean' },
        home: { type: 'object', properties: { floor: { type: 'number' }, pets: { type: 'null' } } },
      },
      required: ['name', 'age', 'color', 'tags', 'ok', 'home'],
      additionalProperties: false,
    };
    const validate = new Ajv().compile(schema);
    for (const seed of [1, 2, 3]) {
      const res = await sdk.chat.completions.create({
        model: 'q8',
        messages: [{ role: 'user', content: 'Describe a person as JSON' }],
        max_tokens: 200,
        temperature: 0.8,
        seed,
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema } },
      });
      const value = JSON.parse(res.choices[0]!.message.content!);
      expect(validate(value), `${res.choices[0]!.message.content} ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    // Anthropic's structured outputs (output_config.format, what the SDK's messages.parse
    // sends) take the same grammar: they were ignored, and the SDK failed on free text.
    const anthropic = await api.post('/v1/messages', { model: 'q8', max_tokens: 200, temperature: 0.8, messages: [{ role: 'user', content: 'Describe a person as JSON' }], output_config: { format: { type: 'json_schema', schema } } });
    expect(anthropic.status, anthropic.text).toBe(200);
    const answered = JSON.parse(anthropic.body.content[0].text);
    expect(validate(answered), `${anthropic.body.content[0].text} ${JSON.stringify(validate.errors)}`).toBe(true);
    // A value that holds the family's stop string (`<|im_end|>` as text) is written whole:
    // the schema ends the answer, not the stop string (it was cut at '{"tag": "').
    const tagged = { type: 'object', properties: { tag: { const: '<|im_end|>' }, n: { type: 'boolean' } }, required: ['tag', 'n'], additionalProperties: false };
    const held = await sdk.chat.completions.create({ model: 'q8', messages: [{ role: 'user', content: 'a tag' }], max_tokens: 60, temperature: 0.8, seed: 2, response_format: { type: 'json_schema', json_schema: { name: 't', schema: tagged } } });
    expect(JSON.parse(held.choices[0]!.message.content!).tag, held.choices[0]!.message.content!).toBe('<|im_end|>');
    // The request's own stop strings still cut it, as vLLM's do.
    const own = await sdk.chat.completions.create({ model: 'q8', messages: [{ role: 'user', content: 'a tag' }], max_tokens: 60, temperature: 0.8, seed: 2, stop: ['<|im_'], response_format: { type: 'json_schema', json_schema: { name: 't', schema: tagged } } });
    expect([own.choices[0]!.finish_reason, own.choices[0]!.message.content]).toEqual(['stop', expect.not.stringContaining('<|im_')]);
    // Numbers a JSON parser reads as finite: node-llama-cpp's number rule allowed a
    // 16-digit exponent, and about half of these answers were Infinity ("34e+75108430").
    const numberSchema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false };
    for (let seed = 0; seed < 12; seed++) {
      const res = await sdk.chat.completions.create({ model: 'q8', messages: [{ role: 'user', content: 'a number' }], max_tokens: 60, temperature: 1, seed, response_format: { type: 'json_schema', json_schema: { name: 'n', schema: numberSchema } } });
      const text = res.choices[0]!.message.content!;
      expect(Number.isFinite(JSON.parse(text).n), text).toBe(true);
    }
    // json_object: every answer is a JSON object, unless max_tokens cut it (as OpenAI's
    // may be, with finish_reason "length"). Which seeds sample a short object on random
    // weights depends on the engine's sampler, so a few are tried and one must be whole.
    let whole = 0;
    for (const seed of [5, 6, 7, 8, 9, 10]) {
      const object = await sdk.chat.completions.create({ model: 'q8', messages: [{ role: 'user', content: 'JSON please' }], max_tokens: 60, temperature: 0.7, seed, response_format: { type: 'json_object' } });
      const { message, finish_reason } = object.choices[0]!;
      let parsed: unknown;
      try {
        parsed = JSON.parse(message.content!);
      } catch {
        expect(finish_reason, `not JSON, yet not cut by max_tokens: ${message.content}`).toBe('length');
        continue;
      }
      whole++;
      expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), message.content!).toBe(true);
    }
    expect(whole).toBeGreaterThan(0);
    // Pydantic's shape for an optional field (anyOf with null) and $defs references.
    const pydantic = {
      $defs: { Pet: { type: 'object', properties: { kind: { enum: ['cat', 'dog'] } }, required: ['kind'], title: 'Pet' } },
      type: 'object',
      properties: { pet: { $ref: '#/$defs/Pet' }, nickname: { anyOf: [{ const: 'Rex' }, { type: 'null' }], default: null } },
      required: ['pet', 'nickname'],
      title: 'Owner',
    };
    const owner = await sdk.chat.completions.create({ model: 'q8', messages: [{ role: 'user', content: 'An owner' }], max_tokens: 200, temperature: 0.8, seed: 9, response_format: { type: 'json_schema', json_schema: { name: 'owner', schema: pydantic } } });
    const ownerValue = JSON.parse(owner.choices[0]!.message.content!);
    expect(new Ajv().validate(pydantic, ownerValue), owner.choices[0]!.message.content!).toBe(true);
    // What a grammar cannot hold to is refused by name, never answered unchecked.
    const bad = await api.post('/v1/chat/completions', { model: 'q8', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: 'nope' } } });
    expect(bad.status).toBe(400);
    const bounded = await api.post('/v1/chat/completions', { model: 'q8', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { n: { type: 'integer', minimum: 3 } } } } } });
    expect(bounded.status).toBe(400);
    expect(bounded.body.error.message).toMatch(/minimum .*cannot be enforced by a llama.cpp grammar/);
  });

  it("holds the answer to a client's own GBNF grammar (llama-server's grammar field), streamed or not, and refuses one it cannot parse", async () => {
    // Random weights: only the grammar makes these answers take this shape.
    const grammar = 'root ::= ("yes" | "no") "." " " word\nword ::= [a-z]{2,5}';
    const shape = /^(yes|no)\. [a-z]{2,5}$/;
    const hello = [{ role: 'user', content: 'Well?' }];
    for (const seed of [1, 2, 3]) {
      const chat = await api.post('/v1/chat/completions', { model: 'q8', messages: hello, grammar, max_tokens: 30, temperature: 0.9, seed });
      expect(chat.status, chat.text).toBe(200);
      expect(chat.body.choices[0].message.content).toMatch(shape);
      // Done when the grammar is: the only tokens it then allows end the answer.
      expect(chat.body.choices[0].finish_reason).toBe('stop');
    }
    const completion = await api.post('/v1/completions', { model: 'q8', prompt: 'Answer:', grammar, max_tokens: 30, temperature: 0.9, seed: 4 });
    expect(completion.status, completion.text).toBe(200);
    expect(completion.body.choices[0].text).toMatch(shape);
    // Through the OpenAI SDK, as its users send an extra field, and streamed.
    const stream = await sdk.chat.completions.create({ model: 'q8', messages: [{ role: 'user', content: 'Well?' }], max_tokens: 30, temperature: 0.9, seed: 5, stream: true, grammar } as never);
    let text = '';
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toMatch(shape);
    // An empty grammar asks for nothing, as in llama-server.
    expect((await api.post('/v1/chat/completions', { model: 'q8', messages: hello, grammar: '', max_tokens: 2 })).status).toBe(200);
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ grammar: 'root ::= word' }, /grammar: llama.cpp could not parse this GBNF grammar/],
      [{ grammar: 'answer ::= "a"' }, /could not parse/],
      [{ grammar: 'root ::= root "a" | "a"' }, /could not parse.*left recursion/],
      [{ grammar, ignore_eos: true }, /ignore_eos cannot be asked with it/],
      [{ grammar: 5 }, /grammar: Invalid input: expected string/],
      [{ grammar, response_format: { type: 'json_object' } }, /grammar and response_format cannot both shape one answer/],
      [{ grammar, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'required' }, /grammar and a forced tool_choice/],
      // Parsed, but nothing the vocabulary holds matches it: llama-server fails at the first token (a 500 before).
      [{ grammar: 'root ::= "\\x00\\x00\\x00"' }, /grammar: no text this model can write follows the grammar/],
      [{ grammar: 'root ::= [z-a]' }, /grammar: no text this model can write follows the grammar/],
    ];
    for (const [fields, message] of refusals) {
      const res = await api.post('/v1/chat/completions', { model: 'q8', messages: hello, max_tokens: 5, ...fields });
      expect(res.status, `${JSON.stringify(fields)}: ${res.text}`).toBe(400);
      expect(res.body.error).toMatchObject({ param: 'grammar', type: 'invalid_request_error' });
      expect(res.body.error.message).toMatch(message);
    }
    // The replica is none the worse: the next answer is as before.
    expect((await api.post('/v1/chat/completions', { model: 'q8', messages: hello, grammar, max_tokens: 30, temperature: 0.9, seed: 1 })).body.choices[0].message.content).toMatch(shape);
  });

  it('forces a tool call for tool_choice "required" and for a named function, with arguments that fit its parameters', async () => {
    // Short tools: the tiny model's context is 512 tokens, and the template lists them all.
    const tools = [
      { type: 'function' as const, function: { name: 'weather', parameters: { type: 'object', properties: { days: { type: 'integer' } } } } },
      { type: 'function' as const, function: { name: 'time', parameters: { type: 'object', properties: { tz: { enum: ['UTC', 'CET'] } } } } },
    ];
    const messages = [{ role: 'user' as const, content: 'Time?' }];
    const validate = new Ajv();
    for (const seed of [1, 2]) {
      const required = await sdk.chat.completions.create({ model: 'q8', messages, tools, tool_choice: 'required', max_tokens: 50, temperature: 0.7, seed });
      expect(required.choices[0]!.finish_reason, JSON.stringify(required.choices[0])).toBe('tool_calls');
      const call = required.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
      const tool = tools.find((t) => t.function.name === call.function.name);
      expect(tool, call.function.name).toBeTruthy();
      expect(validate.validate(tool!.function.parameters, JSON.parse(call.function.arguments)), call.function.arguments).toBe(true);
    }
    const named = await sdk.chat.completions.create({ model: 'q8', messages, tools, tool_choice: { type: 'function', function: { name: 'weather' } }, max_tokens: 50, temperature: 0.7, seed: 4 });
    const namedCall = named.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
    expect(namedCall.function.name).toBe('weather');
    expect(validate.validate(tools[0]!.function.parameters, JSON.parse(namedCall.function.arguments)), namedCall.function.arguments).toBe(true);
    // Pydantic's nested models and enums are definitions of their own.
    const defined = { type: 'function' as const, function: { name: 'time', parameters: { $defs: { Tz: { enum: ['UTC', 'CET'] } }, type: 'object', properties: { tz: { $ref: '#/$defs/Tz' } }, required: ['tz'] } } };
    const pydantic = await sdk.chat.completions.create({ model: 'q8', messages, tools: [defined], tool_choice: 'required', max_tokens: 40, temperature: 0.7, seed: 3 });
    expect(pydantic.choices[0]!.finish_reason, JSON.stringify(pydantic)).toBe('tool_calls');
    const definedCall = pydantic.choices[0]!.message.tool_calls![0]! as { function: { name: string; arguments: string } };
    expect(validate.validate(defined.function.parameters, JSON.parse(definedCall.function.arguments)), definedCall.function.arguments).toBe(true);
    const unknown = await api.post('/v1/chat/completions', { model: 'q8', messages, tools, tool_choice: { type: 'function', function: { name: 'nope' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('weather, time');
    // Cut by the token limit: never the grammar's JSON wrapper as text; the call so far
    // once its name is whole (as OpenAI answers), with finish_reason "length".
    for (const max_tokens of [2, 8]) {
      const cut = await api.post('/v1/chat/completions', { model: 'q8', messages, tools, tool_choice: { type: 'function', function: { name: 'weather' } }, max_tokens, temperature: 0.7, seed: 4 });
      expect(cut.status, cut.text).toBe(200);
      const choice = cut.body.choices[0];
      expect([choice.finish_reason, choice.message.content ?? ''], JSON.stringify(choice)).toEqual(['length', '']);
      for (const call of choice.message.tool_calls ?? []) expect(call.function.name).toBe('weather');
      const streamed = jsonEvents(await readSse(server.url, '/v1/chat/completions', { model: 'q8', messages, tools, tool_choice: 'required', max_tokens, temperature: 0.7, seed: 4, stream: true }));
      expect(streamed.map((e) => e.choices?.[0]?.delta?.content ?? '').join('')).toBe('');
      expect(streamed.at(-2)?.choices?.[0]?.finish_reason ?? streamed.at(-1)?.choices?.[0]?.finish_reason).toBe('length');
      // The Responses API marks such a call incomplete: its arguments are cut, not a call to
      // run (it said completed, and agent loops ran it with "" or half a JSON object).
      const response = await api.post('/v1/responses', { model: 'q8', input: 'Time?', tools: tools.map((t) => ({ type: 'function', ...t.function })), tool_choice: { type: 'function', name: 'weather' }, max_output_tokens: max_tokens, temperature: 0.7, seed: 4 });
      expect(response.status, response.text).toBe(200);
      expect(response.body.status).toBe('incomplete');
      for (const item of response.body.output.filter((i: { type: string }) => i.type === 'function_call')) expect(item.status, JSON.stringify(item)).toBe('incomplete');
    }
    const cutCall = await api.post('/v1/responses', { model: 'q8', input: 'Time?', tools: tools.map((t) => ({ type: 'function', ...t.function })), tool_choice: { type: 'function', name: 'weather' }, max_output_tokens: 8, temperature: 0.7, seed: 4 });
    expect(cutCall.body.output.map((i: { type: string }) => i.type), cutCall.text).toContain('function_call');
  });

  it("names no grammar's hidden stop as stop_reason", async () => {
    // The JSON grammar ends its output with a stop trigger of its own (four newlines); the
    // random model closes its object within the limit for some seeds, which this needs.
    const reasons: Array<[string, unknown]> = [];
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const json = await api.post('/v1/chat/completions', { model: 'q8', messages: [{ role: 'user', content: 'JSON?' }], response_format: { type: 'json_object' }, max_tokens: 150, temperature: 0.7, seed });
      expect(json.status, json.text).toBe(200);
      reasons.push([json.body.choices[0].finish_reason, json.body.choices[0].stop_reason]);
    }
    const stopped = reasons.filter(([finish]) => finish === 'stop');
    expect(stopped.length, JSON.stringify(reasons)).toBeGreaterThan(0);
    for (const [, reason] of stopped) expect(reason).toBeNull();
  });

  it('runs two streams at once and gives each the text it gets alone', async () => {
    const prompts = ['Tell me a story', 'What is the weather like in Paris?'];
    const solo = [];
    for (const prompt of prompts) solo.push((await api.post('/v1/completions', { model: 'q8', prompt, max_tokens: 24, temperature: 0 })).body.choices[0].text);
    const together = await Promise.all(
      prompts.map(async (prompt) => {
        const res = await readSse(server.url, '/v1/completions', { model: 'q8', prompt, max_tokens: 24, temperature: 0, stream: true });
        return jsonEvents(res).map((e) => e.choices?.[0]?.text ?? '').join('');
      }),
    );
    expect(together).toEqual(solo);
  });

  it('runs eight streams at once, one cut short by its client, and gives each of the others the text it gets alone', async () => {
    // llama-server hands each result to the one thread waiting for its task (an engine
    // patch, scripts/llama-server-patches.mjs): a result given to the wrong stream, or
    // lost, or a stream left waiting after another's end, shows here.
    const prompts = Array.from({ length: 7 }, (_, i) => `Count the stars, number ${i}`);
    const solo: string[] = [];
    for (const prompt of prompts) solo.push((await api.post('/v1/completions', { model: 'q8', prompt, max_tokens: 16, temperature: 0 })).body.choices[0].text);
    const controller = new AbortController();
    const cut = (async () => {
      const stream = await sdk.completions.create({ model: 'q8', prompt: 'Go on forever', max_tokens: 400, stream: true, temperature: 0, ignore_eos: true } as OpenAI.CompletionCreateParamsStreaming, { signal: controller.signal });
      let seen = 0;
      try {
        for await (const _chunk of stream) if (++seen === 2) controller.abort();
      } catch {
        // The SDK may end the loop with an abort error; either way the client is gone.
      }
      return seen;
    })();
    const together = await Promise.all(
      prompts.map(async (prompt) => {
        const res = await readSse(server.url, '/v1/completions', { model: 'q8', prompt, max_tokens: 16, temperature: 0, stream: true });
        return jsonEvents(res).map((e) => e.choices?.[0]?.text ?? '').join('');
      }),
    );
    expect(together).toEqual(solo);
    expect(await cut).toBeGreaterThanOrEqual(1);
    const freed = await waitFor(async () => (await api.get('/v1/models/q8/replicas')).body[0].in_flight === 0, 10_000);
    expect(freed).toBe(true);
  });

  it('ends an Anthropic message at one of its stop_sequences and says which, streamed and not, on llama.cpp as on Transformers', async () => {
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'not-needed', maxRetries: 0 });
    const base = { max_tokens: 20, temperature: 0, messages: [{ role: 'user' as const, content: 'The quick brown fox' }] };
    const textOf = (m: Anthropic.Message) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    for (const model of ['q8', 'hf']) {
      const full = textOf(await anthropic.messages.create({ model, ...base }));
      // Three printable characters from the middle, first found there (not at the start).
      const stop = [...Array(Math.max(0, full.length - 3)).keys()].map((i) => full.slice(i, i + 3)).find((c, i) => i >= full.length / 3 && /^[!-~]{3}$/.test(c) && full.indexOf(c) > 0);
      expect(stop, `${model}: no usable stop string in ${JSON.stringify(full)}`).toBeDefined();
      const cut = await anthropic.messages.create({ model, ...base, stop_sequences: ['never in the text', stop!] });
      expect([textOf(cut), cut.stop_reason, cut.stop_sequence], model).toEqual([full.slice(0, full.indexOf(stop!)), 'stop_sequence', stop]);
      const streamed = await anthropic.messages.stream({ model, ...base, stop_sequences: [stop!] }).finalMessage();
      expect([textOf(streamed), streamed.stop_reason, streamed.stop_sequence], model).toEqual([textOf(cut), 'stop_sequence', stop]);
      // Ended by its length: no stop sequence.
      const capped = await anthropic.messages.create({ model, ...base, max_tokens: 2, stop_sequences: ['never in the text'] });
      expect([capped.stop_reason, capped.stop_sequence], model).toEqual(['max_tokens', null]);
    }
  });

  it("counts a conversation's prompt tokens (Anthropic's count_tokens) as its messages call's usage does, alike on llama.cpp and Transformers", async () => {
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'not-needed', maxRetries: 0 });
    const tools = [{ name: 'weather', description: 'Weather by city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const conversation = [
      { role: 'user' as const, content: 'Weather in Paris?' },
      { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'sunny' }] },
    ];
    const bodies = [{ messages: [{ role: 'user' as const, content: 'hi' }] }, { system: 'Be terse.', messages: conversation, tools }];
    const counts: Record<string, number[]> = {};
    for (const model of ['q8', 'hf']) {
      for (const body of bodies) {
        const counted = await anthropic.messages.countTokens({ model, ...body });
        const answered = await anthropic.messages.create({ model, max_tokens: 1, temperature: 0, ...body });
        expect(counted.input_tokens, model).toBe(answered.usage.input_tokens);
        (counts[model] ??= []).push(counted.input_tokens);
      }
    }
    // A stream says the input tokens in its first event, message_start, on both engines.
    for (const model of ['q8', 'hf']) {
      const stream = anthropic.messages.stream({ model, max_tokens: 3, temperature: 0, ...bodies[1]! });
      let started = -1;
      stream.on('streamEvent', (e) => {
        if (e.type === 'message_start') started = e.message.usage.input_tokens;
      });
      await stream.finalMessage();
      expect(started, model).toBe(counts[model]![1]);
    }
    // The same template and tokenizer on both engines; tools and the tool turns take room.
    expect(counts.q8).toEqual(counts.hf);
    expect(counts.q8![1]!).toBeGreaterThan(counts.q8![0]! + 20);
    // Claude Code's spelling (the SDK's beta namespace), at Xinference's /anthropic prefix too.
    const beta = new Anthropic({ baseURL: `${server.url}/anthropic`, apiKey: 'not-needed', maxRetries: 0 });
    expect((await beta.beta.messages.countTokens({ model: 'q8', ...bodies[1]! })).input_tokens).toBe(counts.q8![1]);
    // tool_choice none: the template is not told about the tools.
    const none = await api.post('/v1/messages/count_tokens', { model: 'q8', ...bodies[1]!, tool_choice: { type: 'none' } });
    expect(none.status, none.text).toBe(200);
    expect(none.body.input_tokens).toBeLessThan(counts.q8![1]!);
    // What a messages call refuses, counting refuses alike, in the same words.
    const long = { model: 'q8', messages: [{ role: 'user', content: 'the fox '.repeat(300) }] };
    const refused = await api.post('/v1/messages/count_tokens', long);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/The prompt is \d+ tokens, which leaves no room in the model's context/);
    expect(refused.body.error.param).toBe('messages');
    expect((await api.post('/v1/messages', { ...long, max_tokens: 1 })).body.error.message).toBe(refused.body.error.message);
    const missing = await api.post('/v1/messages/count_tokens', { model: 'q8' });
    expect([missing.status, missing.body.error.param, missing.body.error.message]).toEqual([400, 'messages', 'messages: is required']);
  });

  it('refuses a prompt that leaves no room in the context', async () => {
    const res = await api.post('/v1/completions', { model: 'q8', prompt: 'the fox '.repeat(500), max_tokens: 4 });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/The prompt is \d+ tokens, which leaves no room in the model's context/);
    expect(res.body.error.param).toBe('prompt');
    // Megabytes are refused from their size, before the runtime's event loop tokenizes them.
    const huge = await api.post('/v1/chat/completions', { model: 'q8', messages: [{ role: 'user', content: 'the fox '.repeat(500_000) }], max_tokens: 4 });
    expect(huge.status).toBe(400);
    expect(huge.body.error.message).toMatch(/The prompt is \d+ bytes, so at least \d+ tokens for this model/);
    expect(huge.body.error.param).toBe('messages');
    const long = await api.post('/v1/completions', { model: 'q8', prompt: 'the fox '.repeat(3000), max_tokens: 4 });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/its first 4096 are already \d+ tokens|bytes, so at least/);
    expect((await api.post('/v1/completions', { model: 'q8', prompt: 'Hi', max_tokens: 2 })).status).toBe(200);
  });

  it('samples a temperature of 1e-300 greedily and refuses a repetition_penalty that cannot work', async () => {
    const base = { model: 'q8', prompt: 'Once upon a time', max_tokens: 6 };
    const greedy = await api.post('/v1/completions', { ...base, temperature: 0 });
    const tiny = await api.post('/v1/completions', { ...base, temperature: 1e-300, top_p: 1e-300 });
    expect(tiny.status, tiny.text).toBe(200);
    expect(tiny.body.choices[0].text).toBe(greedy.body.choices[0].text);
    const refused = await api.post('/v1/completions', { ...base, repetition_penalty: 1e-300 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('repetition_penalty');
  });

  it('stops generating for a client that goes away mid-stream', async () => {
    const body = { model: 'q8', messages: [{ role: 'user' as const, content: 'Go on forever' }], max_tokens: 400, stream: true as const, ...greedy };
    const abortedCalls = () => server.logs.filter((l) => l.model_uid === 'q8' && l.source === 'runtime' && String(l.msg).includes('aborted')).length;
    const before = abortedCalls();
    // On llama-server the tiny model writes its 400 tokens in well under a second: on a
    // loaded machine the whole reply may be generated before the client's leaving reaches
    // the runtime (then there is nothing left to stop). So the client leaves at its first
    // chunk, and tries are allowed for that race (four were not enough once on the 2-core
    // CI box, with the container tests beside); a runtime that never stops a call fails
    // every one.
    let aborted = false;
    for (let attempt = 0; attempt < 10 && !aborted; attempt++) {
      const controller = new AbortController();
      // vLLM's ignore_eos keeps the tiny model from ending on its own before the client leaves.
      const stream = await sdk.chat.completions.create({ ...body, ignore_eos: true } as typeof body, { signal: controller.signal });
      let seen = 0;
      try {
        for await (const _chunk of stream) if (++seen === 1) controller.abort();
      } catch {
        // The SDK may end the loop with an abort error; either way the client is gone.
      }
      expect(seen).toBeGreaterThanOrEqual(1);
      aborted = await waitFor(() => abortedCalls() > before, 2_000);
    }
    expect(aborted).toBe(true);
    const freed = await waitFor(async () => (await api.get('/v1/models/q8/replicas')).body[0].in_flight === 0, 10_000);
    expect(freed).toBe(true);
  });

  it('serves GGUF embeddings: unit vectors, the same for the same text, cut by dimensions', async () => {
    const embed = tinyGguf(true);
    const reg = await api.post('/v1/model_registrations/embedding', {
      model: { model_name: 'tiny-gguf-embed', dimensions: 64, max_tokens: 128, language: ['en'], model_specs: [{ model_format: 'ggufv2', quantization: 'f32', model_uri: embed.files.embedding }] },
      persist: false,
    });
    expect(reg.status, reg.text).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'tiny-gguf-embed', model_type: 'embedding', model_engine: 'llama.cpp', model_uid: 'emb' });
    expect(launch.status, launch.text).toBe(200);
    const res = await sdk.embeddings.create({ model: 'emb', input: ['The quick brown fox', 'Stock market news', 'The quick brown fox'] });
    const vectors = res.data.map((d) => d.embedding);
    expect(vectors[0]).toHaveLength(64);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(vectors[2]).toEqual(vectors[0]);
    expect(vectors[1]).not.toEqual(vectors[0]);
    expect(res.usage.prompt_tokens).toBeGreaterThan(4);
    const cut = await sdk.embeddings.create({ model: 'emb', input: 'The quick brown fox', dimensions: 16 });
    expect(cut.data[0]!.embedding).toHaveLength(16);
    expect(Math.hypot(...cut.data[0]!.embedding)).toBeCloseTo(1, 5);
    // An empty text: llama.cpp gave it a vector of length 0; now a 400 naming input.
    const empty = await api.post('/v1/embeddings', { model: 'emb', input: ['a', ''] });
    expect([empty.status, empty.body.error?.param], empty.text).toEqual([400, 'input']);
  });

  it('restarts a runtime killed with SIGKILL like any other', async () => {
    const [pid] = await llamaRuntimePids('--replica=f32-0');
    expect(pid).toBeTruthy();
    process.kill(pid!, 'SIGKILL');
    const back = await waitFor(async () => (await api.post('/v1/completions', { model: 'f32', prompt: 'Hi', max_tokens: 2 })).status === 200, 60_000);
    expect(back).toBe(true);
    const [again] = await llamaRuntimePids('--replica=f32-0');
    expect(again).not.toBe(pid);
    const events = (await api.get('/v1/models/f32/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events.some((e: string) => e.includes('died') && e.includes('SIGKILL'))).toBe(true);
  }, 90_000);

  it('refuses at load a GGUF whose trained context is no context size, naming it', async () => {
    // llama.cpp reads context_length as a signed 32-bit count: 0xFFFFFFFF loaded, then every
    // call failed an assertion in llama-server and the replica restarted again and again.
    const bytes = readFileSync(gguf.files.q8_0!);
    const key = bytes.indexOf('.context_length');
    expect(key).toBeGreaterThan(0);
    const type = key + '.context_length'.length;
    expect(bytes.readUInt32LE(type)).toBe(4); // GGUF's UINT32
    bytes.writeUInt32LE(0xffffffff, type + 4);
    const patched = path.join(work, 'huge-context.gguf');
    writeFileSync(patched, bytes);
    const launch = await api.post('/v1/models', { model_name: 'tiny-gguf', model_engine: 'llama.cpp', model_format: 'ggufv2', quantization: 'q8_0', model_uid: 'huge-context', model_path: patched });
    expect([launch.status, launch.body.error?.code], launch.text).toEqual([400, 'model_load_invalid']);
    expect(launch.body.detail).toContain('context_length (4294967295) is not a context size');
  }, 60_000);

  it('kills a llama-server that stops answering, failing its calls, and the replica comes back', async () => {
    // The control plane's heartbeat reaches the runtime, which answers while its server is stopped:
    // the runtime's own watch of the server's /health (here within 2 s) is what notices.
    const envs = { HANGAR_LLAMA_SERVER_HEALTH_INTERVAL_MS: '300', HANGAR_LLAMA_SERVER_HEALTH_TIMEOUT_MS: '2000' };
    const launch = await api.post('/v1/models', { model_name: 'tiny-gguf', model_engine: 'llama.cpp', model_format: 'ggufv2', quantization: 'q8_0', model_uid: 'frozen', envs });
    expect(launch.status, launch.text).toBe(200);
    try {
      const [runtime] = await llamaRuntimePids('--replica=frozen-0');
      const [engine] = await processPids(({ pid, cmdline, ppid }) => ppid === runtime && cmdline.includes('llama-server') && isAlive(pid));
      if (engine === undefined) return; // HANGAR_LLAMA_ENGINE=binding: no engine process
      process.kill(engine, 'SIGSTOP');
      // Before, this call waited for as long as the server stayed stopped.
      const stuck = await api.post('/v1/chat/completions', { model: 'frozen', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
      // As any call of a dead runtime: 503 (it was a 500 when the socket's failure came first).
      expect([stuck.status, stuck.body.error?.code], stuck.text).toEqual([503, 'runtime_unavailable']);
      expect(isAlive(engine)).toBe(false);
      const back = await waitFor(async () => (await api.post('/v1/completions', { model: 'frozen', prompt: 'Hi', max_tokens: 2 })).status === 200, 60_000);
      expect(back).toBe(true);
      // Killed under calls (out of memory, say): each is a 503 naming no socket path, never a 500.
      const [restarted] = await llamaRuntimePids('--replica=frozen-0');
      const [server] = await processPids(({ pid, cmdline, ppid }) => ppid === restarted && cmdline.includes('llama-server') && isAlive(pid));
      const calls = Array.from({ length: 4 }, () => api.post('/v1/completions', { model: 'frozen', prompt: 'Hi', max_tokens: 400, ignore_eos: true }));
      await new Promise((r) => setTimeout(r, 150));
      process.kill(server!, 'SIGKILL');
      for (const call of await Promise.all(calls)) {
        if (call.status === 200) continue; // done before the kill
        expect([call.status, call.body.error?.code], call.text).toEqual([503, 'runtime_unavailable']);
        expect(call.text).not.toContain('.sock');
      }
    } finally {
      await api.delete('/v1/models/frozen');
    }
  }, 90_000);

  it("ends a runtime's llama-server with the runtime, even when the control plane cannot stop it", async () => {
    const [runtime] = await llamaRuntimePids('--replica=q8-0');
    expect(runtime).toBeTruthy();
    const [engine] = await processPids(({ pid, cmdline, ppid }) => ppid === runtime && cmdline.includes('llama-server') && isAlive(pid));
    // Under HANGAR_LLAMA_ENGINE=binding the runtime computes in-process: no engine process to leave behind.
    if (engine === undefined) return;
    // Its socket lies in a folder beside the runtime's own sockets, which the control
    // plane removes with them: a runtime killed before it could clean up leaves nothing.
    const argv = readFileSync(`/proc/${engine}/cmdline`, 'utf8').split('\0');
    const socket = argv[argv.indexOf('--host') + 1]!;
    // No prompt cache in host memory beside the slots (it grew ~15 MB per new prompt, unseen by the budget).
    expect(argv[argv.indexOf('--cache-ram') + 1]).toBe('0');
    expect(socket).toMatch(/\/run\/[0-9a-f]{12}\/s\.sock$/);
    expect(existsSync(socket)).toBe(true);
    const runtimeArgv = readFileSync(`/proc/${runtime}/cmdline`, 'utf8').split('\0');
    const dataFile = runtimeArgv[runtimeArgv.indexOf('--data') + 1]!.replace(/^ipc:\/\//, '');
    expect(existsSync(dataFile)).toBe(true);
    // The control plane, frozen, cannot kill the runtime's group: only the kernel's
    // parent-death signal (an engine patch) can end the server now.
    process.kill(server.process.pid!, 'SIGSTOP');
    try {
      process.kill(runtime!, 'SIGKILL');
      expect(await waitFor(async () => !isAlive(engine), 10_000)).toBe(true);
    } finally {
      process.kill(server.process.pid!, 'SIGCONT');
    }
    const back = await waitFor(async () => (await api.post('/v1/completions', { model: 'q8', prompt: 'Hi', max_tokens: 2 })).status === 200, 60_000);
    expect(back).toBe(true);
    expect(existsSync(path.dirname(socket)), 'the killed runtime\'s engine socket folder').toBe(false);
    expect(existsSync(dataFile), 'the killed runtime\'s data socket file').toBe(false);
  }, 90_000);

  it('downloads only the quantization a launch names from the hub, with progress, and says what to do when the hub is out of reach', async () => {
    // A loopback stand-in for the hub's `resolve` route, serving the tiny files.
    const asked: string[] = [];
    const hub: Server = createServer((req, res) => {
      asked.push(req.url ?? '');
      const file = path.join(gguf.dir, path.basename(decodeURIComponent(req.url ?? '')));
      if (!req.url?.startsWith('/test-org/tiny-GGUF/resolve/main/') || !file.endsWith('.gguf')) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': statSync(file).size });
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    const port = (hub.address() as { port: number }).port;
    const home = await makeHome('hangar-gguf-hub-');
    const hubServer = await startServer({ home, env: { HF_HUB_OFFLINE: '', HF_ENDPOINT: `http://127.0.0.1:${port}` } });
    try {
      const hubApi = client(hubServer.url);
      const model = {
        version: 2, model_name: 'tiny-hub', model_family: 'qwen2.5-instruct', model_lang: ['en'], model_ability: ['generate'], context_length: 512,
        model_specs: [{ model_format: 'ggufv2', model_size_in_billions: 1, quantization: 'q8_0', model_id: 'test-org/tiny-GGUF', model_hub: 'huggingface', model_file_name_template: 'tiny-{quantization}.gguf' }],
      };
      expect((await hubApi.post('/v1/model_registrations/LLM', { model: JSON.stringify(model), persist: false })).status).toBe(200);
      const launch = await hubApi.post('/v1/models', { model_name: 'tiny-hub', model_engine: 'llama.cpp', model_format: 'ggufv2', quantization: 'q8_0', model_uid: 'hub' });
      expect(launch.status, launch.text).toBe(200);
      // The listing the memory estimate asks for before the download (this stand-in has none: the catalog's size is used), then the one file.
      expect(asked).toEqual(['/api/models/test-org/tiny-GGUF/tree/main?recursive=true', '/test-org/tiny-GGUF/resolve/main/tiny-q8_0.gguf']);
      const done = await hubApi.post('/v1/completions', { model: 'hub', prompt: 'Hi', max_tokens: 3 });
      expect(done.status, done.text).toBe(200);
      // Into the weights cache, where the cache routes find it.
      expect(statSync(path.join(home, 'cache', 'huggingface', 'models--test-org--tiny-GGUF', 'snapshots', 'main', 'tiny-q8_0.gguf')).size).toBe(statSync(gguf.files.q8_0!).size);
      const cached = await hubApi.get('/v1/cache/models');
      expect(JSON.stringify(cached.body)).toContain('test-org/tiny-GGUF');
      // A second launch finds the file in the cache and asks the hub nothing.
      expect((await hubApi.delete('/v1/models/hub')).status).toBe(200);
      expect((await hubApi.post('/v1/models', { model_name: 'tiny-hub', model_engine: 'llama.cpp', quantization: 'q8_0', model_uid: 'hub' })).status).toBe(200);
      expect(asked).toHaveLength(2);

      // The body Xinference users send for the built-in model, with the hub out of reach:
      // a clear error naming the hub, the cache and model_path.
      hub.close();
      const offline = await hubApi.post('/v1/models', { model_name: 'qwen2.5-instruct', model_engine: 'llama.cpp', model_format: 'ggufv2', model_size_in_billions: '0_5', quantization: 'q4_k_m' });
      // Not the model's fault and not for good: 503, to try again (or from a mirror).
      expect([offline.status, offline.body.error.code, offline.headers.get('retry-after')]).toEqual([503, 'model_source_unreachable', '30']);
      expect(offline.body.error.message).toContain('Qwen/Qwen2.5-0.5B-Instruct-GGUF');
      expect(offline.body.error.message).toContain(`127.0.0.1:${port}`);
      expect(offline.body.error.message).toContain(path.join(home, 'cache'));
      expect(offline.body.error.message).toContain('model_path');
    } finally {
      hub.close();
      await hubServer.stop();
      await removeHome(home);
    }
  }, 120_000);
});
