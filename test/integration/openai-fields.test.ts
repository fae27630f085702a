import { describe, expect, inject, it } from 'vitest';
import { client } from './harness/http.js';
import { jsonEvents, readSse } from './harness/sse-client.js';

type Outcome = 'honoured' | 'refused';

/**
 * Every field of OpenAI's chat and completions requests (API reference, 2026), each
 * with a value that asks for something, and what each engine must answer: honoured
 * (200) or refused (400 naming the field). Nothing may be dropped: a 200 for a field
 * an engine cannot do, or a 400 for one it can, fails.
 */
const CHAT: Array<[field: string, value: unknown, transformers: Outcome, simulator: Outcome]> = [
  ['audio', { voice: 'alloy', format: 'wav' }, 'refused', 'refused'],
  ['frequency_penalty', 1.5, 'honoured', 'refused'],
  ['function_call', 'auto', 'refused', 'refused'],
  ['functions', [{ name: 'f', parameters: { type: 'object' } }], 'refused', 'refused'],
  ['logit_bias', { '5': 10 }, 'honoured', 'refused'],
  ['logprobs', true, 'honoured', 'honoured'],
  ['max_completion_tokens', 3, 'honoured', 'honoured'],
  ['max_tokens', 3, 'honoured', 'honoured'],
  ['metadata', { team: 'a' }, 'honoured', 'honoured'],
  ['modalities', ['text', 'audio'], 'refused', 'refused'],
  ['n', 2, 'honoured', 'honoured'],
  ['parallel_tool_calls', false, 'refused', 'refused'],
  ['prediction', { type: 'content', content: 'x' }, 'refused', 'refused'],
  ['presence_penalty', -1, 'honoured', 'refused'],
  ['prompt_cache_key', 'k', 'honoured', 'honoured'],
  ['reasoning_effort', 'low', 'refused', 'refused'],
  ['response_format', { type: 'json_object' }, 'refused', 'refused'],
  ['safety_identifier', 'u-1', 'honoured', 'honoured'],
  ['seed', 7, 'honoured', 'honoured'],
  ['service_tier', 'flex', 'refused', 'refused'],
  ['stop', ['\n\n'], 'honoured', 'honoured'],
  ['store', true, 'refused', 'refused'],
  ['stream_options', { include_usage: true }, 'honoured', 'honoured'],
  ['temperature', 0.5, 'honoured', 'honoured'],
  ['tool_choice', 'none', 'honoured', 'honoured'],
  ['tools', [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], 'honoured', 'honoured'],
  ['top_logprobs', 2, 'honoured', 'honoured'],
  ['top_p', 0.9, 'honoured', 'honoured'],
  ['user', 'u-1', 'honoured', 'honoured'],
  ['verbosity', 'low', 'refused', 'refused'],
  ['verbosity', 'medium', 'honoured', 'honoured'],
  ['web_search_options', {}, 'refused', 'refused'],
  // A completions field: on chat it was accepted and changed nothing.
  ['best_of', 3, 'refused', 'refused'],
];

const COMPLETIONS: Array<[field: string, value: unknown, transformers: Outcome, simulator: Outcome]> = [
  ['best_of', 3, 'refused', 'refused'],
  ['echo', true, 'honoured', 'honoured'],
  ['frequency_penalty', 1, 'honoured', 'refused'],
  ['logit_bias', { '5': -100 }, 'honoured', 'refused'],
  ['logprobs', 2, 'honoured', 'honoured'],
  ['max_tokens', 3, 'honoured', 'honoured'],
  ['n', 3, 'honoured', 'honoured'],
  ['presence_penalty', 1, 'honoured', 'refused'],
  ['seed', 1, 'honoured', 'honoured'],
  ['stop', 'x', 'honoured', 'honoured'],
  ['stream_options', { include_usage: true }, 'honoured', 'honoured'],
  ['suffix', 'end', 'refused', 'refused'],
  ['temperature', 0, 'honoured', 'honoured'],
  ['top_p', 0.5, 'honoured', 'honoured'],
  ['user', 'u', 'honoured', 'honoured'],
];

/** vLLM's extra fields (its OpenAI server's), for clients that move from vLLM: the same rule. */
const VLLM_EXTRAS: Array<[field: string, value: unknown, transformers: Outcome, simulator: Outcome]> = [
  ['ignore_eos', true, 'honoured', 'honoured'],
  ['min_p', 0.1, 'honoured', 'refused'],
  ['min_tokens', 2, 'refused', 'refused'],
  ['use_beam_search', true, 'refused', 'refused'],
  ['length_penalty', 0.8, 'refused', 'refused'],
  ['include_stop_str_in_output', true, 'refused', 'refused'],
  ['skip_special_tokens', false, 'refused', 'refused'],
  ['spaces_between_special_tokens', false, 'refused', 'refused'],
  ['truncate_prompt_tokens', 16, 'refused', 'refused'],
  ['prompt_logprobs', 1, 'refused', 'refused'],
  ['allowed_token_ids', [1, 2], 'refused', 'refused'],
  ['bad_words', ['x'], 'refused', 'refused'],
  ['guided_json', { type: 'object' }, 'refused', 'refused'],
  ['guided_regex', 'a+', 'refused', 'refused'],
  ['guided_choice', ['a', 'b'], 'refused', 'refused'],
  ['guided_grammar', 'root ::= "a"', 'refused', 'refused'],
  ['structured_outputs', { json: { type: 'object' } }, 'refused', 'refused'],
  ['return_tokens_as_token_ids', true, 'refused', 'refused'],
  ['priority', 1, 'refused', 'refused'],
];

/**
 * The llama.cpp engine answers every field as the Transformers engine does, except
 * these: its grammars do structured output.
 */
const LLAMA_CPP_DIFFERS: Record<string, Outcome> = { response_format: 'honoured', grammar: 'honoured' };

/** llama-server's own fields, which Xinference's llama.cpp engine hands to it: llama.cpp's alone (LLAMA_CPP_DIFFERS). */
const LLAMA_SERVER_EXTRAS: Array<[field: string, value: unknown, transformers: Outcome, simulator: Outcome]> = [['grammar', 'root ::= "a"', 'refused', 'refused']];

const VLLM_CHAT_EXTRAS: Array<[field: string, value: unknown, transformers: Outcome, simulator: Outcome]> = [
  ['echo', true, 'refused', 'refused'],
  // Where the prompt ends (chat-ending.ts): every engine renders it.
  ['add_generation_prompt', false, 'honoured', 'honoured'],
  ['continue_final_message', true, 'honoured', 'honoured'],
];

describe("OpenAI's request fields: honoured or refused by name, never dropped", () => {
  // The server the `shared` project's files share (harness/shared-server.ts): `tf` on
  // Transformers (with tools), `lc` on llama.cpp (the same weights, Q8_0), `sim` on the simulator.
  const server = { url: inject('sharedServerUrl') };
  const api = client(server.url);
  const tinyEos = inject('sharedTinyEos');

  const walk = async (route: string, base: Record<string, unknown>, table: typeof CHAT) => {
    const engines: Record<string, string> = { tf: 'Transformers', lc: 'llama.cpp', sim: 'simulator' };
    for (const [field, value, ...outcomes] of table) {
      for (const [model, expected] of [['tf', outcomes[0]], ['lc', LLAMA_CPP_DIFFERS[field] ?? outcomes[0]], ['sim', outcomes[1]]] as const) {
        const body = { model, ...base, [field]: value, ...(field === 'top_logprobs' ? { logprobs: true } : {}), ...(field === 'stream_options' ? { stream: true } : {}) };
        const res = await api.post(route, body);
        if (expected === 'honoured') {
          expect(res.status, `${route} ${field} on ${model}: ${res.text}`).toBe(200);
        } else {
          expect(res.status, `${route} ${field} on ${model} should be refused: ${res.text}`).toBe(400);
          // Tools depend on the model (its abilities), the rest on its engine.
          if (field === 'tools') {
            expect(res.body.error).toMatchObject({ param: field, code: 'ability_missing' });
          } else {
            expect(res.body.error, `${route} ${field} on ${model}`).toMatchObject({ param: field, code: 'parameter_unsupported' });
            expect(res.body.error.message).toContain(engines[model]);
          }
        }
      }
    }
  };

  it('walks every chat field', async () => {
    await walk('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }, CHAT);
    await walk('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }, [...VLLM_EXTRAS, ...VLLM_CHAT_EXTRAS, ...LLAMA_SERVER_EXTRAS]);
  }, 120_000);

  it('refuses image parts and LoRA adapters a model does not have, naming the field', async () => {
    const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }, { type: 'text', text: 'hi' }] };
    for (const model of ['tf', 'lc', 'sim']) {
      const res = await api.post('/v1/chat/completions', { model, messages: [image], max_tokens: 3 });
      expect(res.status, `${model}: ${res.text}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'ability_missing', param: 'messages' });
      expect(res.body.error.message).toContain('images (image_url parts');
    }
    for (const [model, code] of [['tf', 'invalid_field'], ['lc', 'parameter_unsupported'], ['sim', 'parameter_unsupported']] as const) {
      for (const route of ['/v1/chat/completions', '/v1/completions']) {
        const body = route === '/v1/completions' ? { prompt: 'hi' } : { messages: [{ role: 'user', content: 'hi' }] };
        const res = await api.post(route, { model, ...body, max_tokens: 3, lora_name: 'x' });
        expect(res.status, `${route} ${model}: ${res.text}`).toBe(400);
        expect(res.body.error, `${route} ${model}`).toMatchObject({ code, param: 'lora_name' });
      }
    }
  });

  it('forces a tool call where the engine can, and refuses to pretend elsewhere', async () => {
    // An enum keeps the forced arguments short: the tiny model's free strings run long.
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { enum: ['Paris', 'Rome'] } }, required: ['city'] } } }];
    for (const choice of ['required', { type: 'function', function: { name: 'get_weather' } }]) {
      const body = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: choice, max_tokens: 100, temperature: 0 };
      const res = await api.post('/v1/chat/completions', { model: 'tf', ...body });
      expect(res.status, `tf ${JSON.stringify(choice)}: ${res.text}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_unsupported', param: 'tool_choice' });
      expect(res.body.error.message).toContain('Transformers');
      // llama.cpp's grammar forces the call; the simulator answers with one built from the schema.
      for (const model of ['lc', 'sim']) {
        const forced = await api.post('/v1/chat/completions', { model, ...body });
        expect(forced.status, forced.text).toBe(200);
        expect(forced.body.choices[0].finish_reason).toBe('tool_calls');
        expect(forced.body.choices[0].message.tool_calls[0].function.name).toBe('get_weather');
        expect(['Paris', 'Rome']).toContain(JSON.parse(forced.body.choices[0].message.tool_calls[0].function.arguments).city);
      }
    }
    // LangChain's with_structured_output(method="function_calling") sends a named function with
    // parallel_tool_calls: false: one call is made, so false is met; beside "required" it is not.
    for (const model of ['lc', 'sim']) {
      const base = { model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, parallel_tool_calls: false, max_tokens: 100, temperature: 0 };
      const one = await api.post('/v1/chat/completions', { ...base, tool_choice: { type: 'function', function: { name: 'get_weather' } } });
      expect(one.status, one.text).toBe(200);
      expect(one.body.choices[0].message.tool_calls).toHaveLength(1);
      const many = await api.post('/v1/chat/completions', { ...base, tool_choice: 'required' });
      expect([many.status, many.body.error?.param], model).toEqual([400, 'parallel_tool_calls']);
    }
    const unknown = await api.post('/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'function', function: { name: 'nope' } } });
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body.error).toMatchObject({ param: 'tool_choice' });
    // A forced call with no tools to call, or without a name, is refused alike on every engine.
    for (const model of ['tf', 'lc', 'sim']) {
      const none = await api.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }], tool_choice: 'required', max_tokens: 3 });
      expect([none.status, none.body.error.param], model).toEqual([400, 'tool_choice']);
      // Transformers cannot force a call at all, and says that first.
      if (model === 'tf') expect(none.body.error.code).toBe('parameter_unsupported');
      else expect(none.body.error.message, model).toBe('tool_choice: "required" forces a tool call, but the request has no tools');
      const nameless = await api.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'function' }, max_tokens: 3 });
      expect([nameless.status, nameless.body.error.param], model).toEqual([400, model === 'tf' ? 'tool_choice' : 'tool_choice.function.name']);
    }
    const anthropicAny = await api.post('/v1/messages', { model: 'sim', max_tokens: 3, messages: [{ role: 'user', content: 'Hi' }], tool_choice: { type: 'any' } });
    expect([anthropicAny.status, anthropicAny.body.error.param]).toEqual([400, 'tool_choice']);
    // "auto" stays the model's choice on every tool-calling engine.
    expect((await api.post('/v1/chat/completions', { model: 'tf', messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: 'auto', max_tokens: 3 })).status).toBe(200);
  });

  it('walks every completions field', async () => {
    await walk('/v1/completions', { prompt: 'hello', max_tokens: 3 }, COMPLETIONS);
    await walk('/v1/completions', { prompt: 'hello', max_tokens: 3 }, [...VLLM_EXTRAS, ...LLAMA_SERVER_EXTRAS]);
  }, 120_000);

  it("refuses vLLM's stream_options.continuous_usage_stats by name and accepts OpenAI's include_obfuscation", async () => {
    for (const [route, base] of [['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }], ['/v1/completions', { prompt: 'hello' }]] as const) {
      for (const model of ['tf', 'lc', 'sim']) {
        const body = { model, ...base, max_tokens: 2, stream: true };
        const refused = await api.post(route, { ...body, stream_options: { include_usage: true, continuous_usage_stats: true } });
        expect(refused.status, refused.text).toBe(400);
        expect(refused.body.error).toMatchObject({ param: 'stream_options.continuous_usage_stats', code: 'parameter_unsupported' });
        expect(refused.body.error.message).toContain('include_usage');
        const plain = await readSse(server.url, route, { ...body, stream_options: { include_usage: true, continuous_usage_stats: false, include_obfuscation: true } });
        expect(plain.status).toBe(200);
        expect(plain.data.at(-1)).toBe('[DONE]');
      }
    }
  });

  it('refuses stream_options on an answer that does not stream, as OpenAI and vLLM do', async () => {
    for (const [route, base] of [['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }], ['/v1/completions', { prompt: 'hello' }]] as const) {
      for (const stream of [false, null, undefined]) {
        const res = await api.post(route, { model: 'sim', ...base, max_tokens: 2, stream, stream_options: { include_usage: true } });
        expect([res.status, res.body.error?.code, res.body.error?.param], `${route} stream ${stream}`).toEqual([400, 'invalid_field', 'stream_options']);
        expect(res.body.error.message).toContain('only allowed when stream is true');
      }
      // A null one is no option.
      expect((await api.post(route, { model: 'sim', ...base, max_tokens: 2, stream_options: null })).status).toBe(200);
    }
  });

  it('refuses a function tool without a name or with parameters that are not a schema object, naming the field', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const tool = (fn: Record<string, unknown>) => [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} }, ...fn } }];
    for (const model of ['tf', 'lc']) {
      for (const [fn, param] of [
        [{ name: '' }, 'tools.0.function.name'],
        [{ name: 'x'.repeat(65) }, 'tools.0.function.name'],
        [{ parameters: 'object' }, 'tools.0.function.parameters'],
        [{ parameters: [{ type: 'object' }] }, 'tools.0.function.parameters'],
        [{ description: 5 }, 'tools.0.function.description'],
        // A name a template writes into the prompt and a call could not name back; properties that are no schemas.
        [{ name: 'a b/\u0000' }, 'tools.0.function.name'],
        [{ parameters: { type: 'object', properties: 'x' } }, 'tools.0.function.parameters.properties'],
      ] as const) {
        const res = await api.post('/v1/chat/completions', { model, messages, max_tokens: 2, tools: tool(fn) });
        expect([res.status, res.body.error?.code, res.body.error?.param], `${model} ${JSON.stringify(fn).slice(0, 40)}`).toEqual([400, 'invalid_field', param]);
      }
      // A tool without parameters is a function of no arguments, as OpenAI takes it; an MCP tool's dotted name passes, as on Xinference.
      const bare = await api.post('/v1/chat/completions', { model, messages, max_tokens: 2, tools: [{ type: 'function', function: { name: 'now' } }, { type: 'function', function: { name: 'server.now:v2' } }] });
      expect(bare.status, bare.text).toBe(200);
      // Only an assistant's turn may go without content, as OpenAI says.
      for (const [history, param] of [
        [[{ role: 'user', content: null }], 'messages.0.content'],
        [[{ role: 'user' }], 'messages.0.content'],
        [[{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'now', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: null }], 'messages.2.content'],
      ] as const) {
        const res = await api.post('/v1/chat/completions', { model, messages: history, max_tokens: 2 });
        expect([res.status, res.body.error?.param], `${model}: ${res.text}`).toEqual([400, param]);
      }
    }
  });

  it("runs vLLM's ignore_eos past the model's end token, and refuses a value that is not a boolean", async () => {
    // The bias makes the end token the tiny model's only choice.
    const forced = { model: 'tf', prompt: 'hello', max_tokens: 5, temperature: 0, logit_bias: { [String(tinyEos)]: 100 } };
    for (const model of ['tf', 'lc']) {
      const ended = await api.post('/v1/completions', { ...forced, model });
      expect([ended.body.choices[0].finish_reason, ended.body.usage.completion_tokens], ended.text).toEqual(['stop', 1]);
      const ignored = await api.post('/v1/completions', { ...forced, model, ignore_eos: true });
      expect([ignored.body.choices[0].finish_reason, ignored.body.usage.completion_tokens], ignored.text).toEqual(['length', 5]);
      const streamed = await readSse(server.url, '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, temperature: 0, logit_bias: { [String(tinyEos)]: 100 }, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
      expect(jsonEvents(streamed).at(-1)?.usage.completion_tokens).toBe(4);
    }
    // The simulator has no end token: the field is accepted and its answer runs to max_tokens.
    const sim = await api.post('/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, ignore_eos: true });
    expect(sim.body.usage.completion_tokens, sim.text).toBe(4);
    for (const [field, value] of [['ignore_eos', 'yes'], ['min_p', 1.5], ['min_tokens', -1]] as const) {
      const bad = await api.post('/v1/completions', { ...forced, [field]: value });
      expect(bad.status, `${field}: ${bad.text}`).toBe(400);
      expect(bad.body.error).toMatchObject({ param: field, code: 'invalid_field' });
    }
  });

  it('refuses a content part of no known type, or a text part without its text, alike on every engine', async () => {
    for (const model of ['tf', 'lc', 'sim']) {
      for (const [part, param] of [[{ type: 'bogus' }, 'messages.0.content.1.type'], [{ type: 'text' }, 'messages.0.content.1.text'], [{ type: 'text', text: 5 }, 'messages.0.content.1.text']] as const) {
        const res = await api.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }], max_tokens: 2 });
        expect([res.status, res.body.error?.code, res.body.error?.param], `${model} ${JSON.stringify(part)}: ${res.text}`).toEqual([400, 'invalid_field', param]);
      }
    }
    // Parts a text model cannot take are refused alike by both engines, naming the part;
    // an assistant's refusal part in history is its text, as in the Responses route.
    for (const model of ['tf', 'lc']) {
      const audio = await api.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }], max_tokens: 2 });
      expect([audio.status, audio.body.error?.param], `${model}: ${audio.text}`).toEqual([400, 'messages.0.content.1']);
      expect(audio.body.error.message).toContain('takes text only, not input_audio parts');
      const history = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }, { role: 'user', content: 'why?' }];
      const refused = await api.post('/v1/chat/completions', { model, messages: history, max_tokens: 2 });
      expect(refused.status, `${model}: ${refused.text}`).toBe(200);
    }
  });

  it('answers n independent choices, seeded ones repeatable, streamed or not', async () => {
    const body = { model: 'tf', messages: [{ role: 'user', content: 'hi' }], max_tokens: 6, n: 3, seed: 11 };
    const first = await api.post('/v1/chat/completions', body);
    expect(first.body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2]);
    const again = await api.post('/v1/chat/completions', body);
    expect(again.body.choices.map((c: { message: { content: string } }) => c.message.content)).toEqual(first.body.choices.map((c: { message: { content: string } }) => c.message.content));
    expect(new Set(first.body.choices.map((c: { message: { content: string } }) => c.message.content)).size).toBeGreaterThan(1);
    const single = await api.post('/v1/chat/completions', { ...body, n: 1 });
    expect(first.body.usage.prompt_tokens).toBe(single.body.usage.prompt_tokens);
    expect(first.body.usage.completion_tokens).toBe(first.body.choices.length * 6);
    // The same choices streamed: every event names its choice; one usage chunk for all.
    const streamed = await readSse(server.url, '/v1/chat/completions', { ...body, stream: true, stream_options: { include_usage: true } });
    expect(streamed.data.at(-1)).toBe('[DONE]');
    const events = jsonEvents(streamed);
    const texts = [0, 1, 2].map((i) => events.filter((e) => e.choices?.[0]?.index === i).map((e) => e.choices[0].delta?.content ?? '').join(''));
    expect(texts).toEqual(first.body.choices.map((c: { message: { content: string } }) => c.message.content));
    expect(new Set(events.map((e) => e.id)).size).toBe(1);
    const usage = events.filter((e) => e.usage);
    expect(usage).toHaveLength(1);
    expect(usage[0]!.usage).toEqual(first.body.usage);
    expect(events.filter((e) => e.choices?.[0]?.finish_reason).map((e) => e.choices[0].index).sort()).toEqual([0, 1, 2]);
  });

  it('answers logprobs from the Transformers engine in the chat and completions shapes', async () => {
    const chat = await api.post('/v1/chat/completions', { model: 'tf', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 2 });
    const content = chat.body.choices[0].logprobs.content as Array<{ token: string; logprob: number; top_logprobs: unknown[] }>;
    expect(content).toHaveLength(chat.body.usage.completion_tokens);
    expect(content.every((c) => c.logprob <= 0 && c.top_logprobs.length === 2)).toBe(true);
    const legacy = await api.post('/v1/completions', { model: 'tf', prompt: 'hello', max_tokens: 4, temperature: 0, logprobs: 1 });
    expect(legacy.body.choices[0].logprobs.tokens).toHaveLength(legacy.body.usage.completion_tokens);
    // top_logprobs alone would be dropped: refused by name, as vLLM's server does.
    for (const logprobs of [undefined, false]) {
      const alone = await api.post('/v1/chat/completions', { model: 'tf', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, top_logprobs: 2, logprobs });
      expect(alone.status, alone.text).toBe(400);
      expect(alone.body.error).toMatchObject({ param: 'top_logprobs', code: 'invalid_field' });
      expect(alone.body.error.message).toContain('top_logprobs needs logprobs: true');
    }
  });
});
