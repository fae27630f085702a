import { request as httpRequest } from 'node:http';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from './harness/http.js';
import { makeHome, removeHome, startServer, venvPython, type TestServer } from './harness/server.js';
import { tinyLlm, tinyLlmRegistration } from './harness/tiny-models.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
// The simulator's first words (python-runtime/hangar_runtime/engines/simulator/text.py).
const SIX_WORDS = 'alpha bravo charlie delta echo foxtrot ';

/** Anthropic's Messages API through the official SDKs, with auth on (x-api-key). */
describe('Anthropic Messages API (real server, both SDKs)', () => {
  let server: TestServer;
  let work: string;
  const as = { authorization: `Bearer ${ADMIN_KEY}` };

  beforeAll(async () => {
    work = await makeHome('hangar-anthropic-');
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify(upstreamAuthConfig()));
    const tiny = tinyLlm();
    server = await startServer({ args: ['--auth-config', authFile] });
    expect((await request(server.url, 'POST', '/v1/model_registrations/LLM', tinyLlmRegistration('tiny-anthropic', tiny.path, ['chat', 'generate', 'tools']), as)).status).toBe(200);
    const launches = await Promise.all([
      request(server.url, 'POST', '/v1/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'sim', step_ms: 1, ttft_ms: 0 }, as),
      request(server.url, 'POST', '/v1/models', { model_name: 'tiny-anthropic', model_engine: 'Transformers', model_uid: 'tiny' }, as),
    ]);
    for (const l of launches) expect(l.status, l.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('answers messages.create with text, stop reason and usage (JS SDK, x-api-key)', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    const message = await client.messages.create({ model: 'sim', max_tokens: 6, system: 'You are terse.', messages: [{ role: 'user', content: 'hi there' }] });
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.content).toEqual([{ type: 'text', text: SIX_WORDS }]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(6);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
  });

  it('streams the event sequence the SDK assembles into the same message, at /anthropic too', async () => {
    const client = new Anthropic({ baseURL: `${server.url}/anthropic`, apiKey: ADMIN_KEY, maxRetries: 0 });
    const stream = client.messages.stream({ model: 'sim', max_tokens: 6, messages: [{ role: 'user', content: 'hi' }] });
    const types: string[] = [];
    let startUsage: unknown = null;
    stream.on('streamEvent', (e) => {
      types.push(e.type);
      if (e.type === 'message_start') startUsage = { ...e.message.usage };
    });
    const final = await stream.finalMessage();
    // The input tokens come in message_start, as Anthropic sends them: many clients that count from events read them only there.
    expect(startUsage).toEqual({ input_tokens: 1, output_tokens: 0 });
    expect(final.usage.input_tokens).toBe(1);
    expect(final.content).toEqual([{ type: 'text', text: SIX_WORDS }]);
    expect(final.stop_reason).toBe('max_tokens');
    expect(final.usage.output_tokens).toBe(6);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types).toContain('content_block_delta');
    // Anthropic's shape at either base URL (the SDK's anthropic-version header says who asks).
    for (const at of [client, new Anthropic({ baseURL: server.url, apiKey: ADMIN_KEY, maxRetries: 0 })]) {
      const models = await at.models.list();
      expect(models.data.map((m) => m.id).sort()).toEqual(['sim', 'tiny']);
      for (const m of models.data) expect(m).toMatchObject({ type: 'model', display_name: m.id, created_at: expect.stringMatching(/^\d{4}-/) });
      expect(await at.models.retrieve('sim')).toMatchObject({ id: 'sim', type: 'model', display_name: 'sim' });
    }
    const openai = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(((await openai.json()) as { object: string }).object).toBe('list');
  });

  it('ends at one of the stop_sequences and says which, streamed and not; a stop string that is not one of them is end_turn', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    const body = { model: 'sim', max_tokens: 10, messages: [{ role: 'user' as const, content: 'hi' }], stop_sequences: ['zulu', 'charlie', 'bravo'] };
    const message = await client.messages.create(body);
    // bravo comes first in the text: it is the one that ended it.
    expect([message.content, message.stop_reason, message.stop_sequence]).toEqual([[{ type: 'text', text: 'alpha ' }], 'stop_sequence', 'bravo']);
    const stream = client.messages.stream({ ...body, stop_sequences: ['delta'] });
    const deltas: unknown[] = [];
    stream.on('streamEvent', (e) => {
      if (e.type === 'message_delta') deltas.push(e.delta);
    });
    const final = await stream.finalMessage();
    expect(deltas).toEqual([{ stop_reason: 'stop_sequence', stop_sequence: 'delta' }]);
    expect([final.content, final.stop_reason, final.stop_sequence]).toEqual([[{ type: 'text', text: 'alpha bravo charlie ' }], 'stop_sequence', 'delta']);
  });

  it("serves the Vercel AI SDK's Anthropic provider, generated and streamed, with usage", async () => {
    const anthropic = createAnthropic({ baseURL: `${server.url}/v1`, apiKey: ADMIN_KEY });
    const generated = await generateText({ model: anthropic('sim'), prompt: 'hello there', maxOutputTokens: 4 });
    expect(generated.text).toBe('alpha bravo charlie delta ');
    expect([generated.usage.inputTokens, generated.usage.outputTokens]).toEqual([2, 4]);
    const streamed = streamText({ model: anthropic('sim'), prompt: 'hello there', maxOutputTokens: 5 });
    expect(await streamed.text).toBe('alpha bravo charlie delta echo ');
    const usage = await streamed.usage;
    expect([usage.inputTokens, usage.outputTokens]).toEqual([2, 5]);
  });

  it('takes a tool conversation (tools, tool_use, tool_result) on a real model', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    const message = await client.messages.create({
      model: 'tiny',
      max_tokens: 5,
      temperature: 0,
      tools: [{ name: 'weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
    });
    expect(message.usage.input_tokens).toBeGreaterThan(20);
    expect(['end_turn', 'max_tokens', 'tool_use']).toContain(message.stop_reason);
  });

  it('refuses structured output a model cannot do, by its Anthropic name', async () => {
    const base = { model: 'tiny', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
    // It was accepted and changed nothing: free text where the SDK's messages.parse wants JSON.
    const format = await request(server.url, 'POST', '/v1/messages', { ...base, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } }, as);
    expect([format.status, format.body.error?.code, format.body.error?.param], format.text).toEqual([400, 'parameter_unsupported', 'output_config.format']);
    // An effort hint, and thinking on a model that does not reason (Claude Code sends it by setting), change nothing and pass.
    expect((await request(server.url, 'POST', '/v1/messages', { ...base, thinking: { type: 'disabled' }, output_config: { effort: 'low' } }, as)).status).toBe(200);
    expect((await request(server.url, 'POST', '/v1/messages', { ...base, max_tokens: 1030, thinking: { type: 'enabled', budget_tokens: 1024 } }, as)).status).toBe(200);
  });

  it("counts a request's input tokens as the message's usage does (count_tokens), guarded like messages", async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    const body = { system: 'You are terse.', messages: [{ role: 'user' as const, content: 'hi there, how are you' }] };
    for (const model of ['sim', 'tiny']) {
      const counted = await client.messages.countTokens({ model, ...body });
      const message = await client.messages.create({ model, max_tokens: 1, ...body });
      expect(counted).toEqual({ input_tokens: message.usage.input_tokens });
    }
    // The simulator counts words: system and user text.
    expect((await client.messages.countTokens({ model: 'sim', ...body })).input_tokens).toBe(8);
    const wrong = new Anthropic({ baseURL: server.url, apiKey: 'sk-wrongwrongwro', maxRetries: 0 });
    await expect(wrong.messages.countTokens({ model: 'sim', ...body })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(client.messages.countTokens({ model: 'nope', ...body })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(client.messages.countTokens({ model: 'sim', messages: [] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    // What changes how the answer is held, not the prompt, is left out of the count: the
    // Transformers engine cannot force a tool call or hold a JSON Schema, and still counts.
    const plain = (await client.messages.countTokens({ model: 'tiny', ...body })).input_tokens;
    const held = await request(server.url, 'POST', '/v1/messages/count_tokens', { model: 'tiny', ...body, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } }, as);
    expect([held.status, held.body.input_tokens], held.text).toEqual([200, plain]);
    const tools = [{ name: 'weather', description: 'the weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const auto = (await client.messages.countTokens({ model: 'tiny', ...body, tools })).input_tokens;
    const forced = await request(server.url, 'POST', '/v1/messages/count_tokens', { model: 'tiny', ...body, tools, tool_choice: { type: 'any' } }, as);
    expect([forced.status, forced.body.input_tokens], forced.text).toEqual([200, auto]);
  });

  it('continues a prefill (a final assistant message) as Anthropic does: the answer is what follows it, on the chat route too', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'Give me JSON.' }, { role: 'assistant' as const, content: '{"answer":' }];
    // The prompt vLLM's /tokenize gives for the chat continued: it ends with the prefill's text, no end of turn.
    const tokenized = await request(server.url, 'POST', '/tokenize', { model: 'tiny', messages, add_generation_prompt: false, continue_final_message: true }, as);
    expect(tokenized.status, tokenized.text).toBe(200);
    const prompt = await request(server.url, 'POST', '/detokenize', { model: 'tiny', tokens: tokenized.body.tokens }, as);
    expect(prompt.body.prompt.endsWith('{"answer":')).toBe(true);
    const opened = await request(server.url, 'POST', '/tokenize', { model: 'tiny', messages }, as);
    expect(opened.body.count).toBeGreaterThan(tokenized.body.count);
    // Greedy: the message's text is what the model writes after exactly that prompt.
    const completion = await request(server.url, 'POST', '/v1/completions', { model: 'tiny', prompt: tokenized.body.tokens, max_tokens: 8, temperature: 0 }, as);
    expect(completion.status, completion.text).toBe(200);
    expect(completion.body.choices[0].text).not.toBe('');
    const message = await client.messages.create({ model: 'tiny', max_tokens: 8, temperature: 0, messages });
    expect(message.content).toEqual([{ type: 'text', text: completion.body.choices[0].text }]);
    expect(message.usage.input_tokens).toBe(tokenized.body.count);
    expect((await client.messages.countTokens({ model: 'tiny', messages })).input_tokens).toBe(tokenized.body.count);
    // vLLM's fields on the chat route give the same answer; asking for both ends is refused, as vLLM refuses it.
    const chat = await request(server.url, 'POST', '/v1/chat/completions', { model: 'tiny', messages, max_tokens: 8, temperature: 0, continue_final_message: true, add_generation_prompt: false }, as);
    expect([chat.status, chat.body.choices?.[0].message.content], chat.text).toEqual([200, completion.body.choices[0].text]);
    const both = await request(server.url, 'POST', '/v1/chat/completions', { model: 'tiny', messages, max_tokens: 8, continue_final_message: true, add_generation_prompt: true }, as);
    expect([both.status, both.body.error?.param], both.text).toEqual([400, 'continue_final_message']);
    // A continued message cannot be held to a shape that starts a whole answer (llama.cpp's grammar began a new object).
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } }];
    const forced = await request(server.url, 'POST', '/v1/chat/completions', { model: 'sim', messages, max_tokens: 4, continue_final_message: true, tools, tool_choice: 'required' }, as);
    expect([forced.status, forced.body.error?.param], forced.text).toEqual([400, 'continue_final_message']);
    const anthropicTools = [{ name: 'weather', input_schema: { type: 'object', properties: {} } }];
    const shaped = await request(server.url, 'POST', '/v1/messages', { model: 'sim', max_tokens: 4, messages, tools: anthropicTools, tool_choice: { type: 'any' } }, as);
    expect([shaped.status, shaped.body.error?.param], shaped.text).toEqual([400, 'messages.1.content']);
    expect(shaped.body.error.message).toContain('cannot be continued with a forced tool_choice');
    // The refusal names the continued message itself, past an empty one left out after it.
    const named = await request(server.url, 'POST', '/v1/messages', { model: 'tiny', max_tokens: 4, messages: [messages[0], { role: 'assistant', content: 'foo ' }, { role: 'assistant', content: '' }] }, as);
    expect([named.status, named.body.error?.param], named.text).toEqual([400, 'messages.1.content']);
    // An empty final assistant message is no prefill: the prompt is the one without it.
    const plain = (await client.messages.countTokens({ model: 'tiny', messages: [messages[0]!] })).input_tokens;
    expect((await client.messages.countTokens({ model: 'tiny', messages: [messages[0]!, { role: 'assistant', content: '' }] })).input_tokens).toBe(plain);
    // Anthropic refuses a prefill that ends in whitespace, in these words.
    const spaced = client.messages.create({ model: 'tiny', max_tokens: 8, messages: [messages[0]!, { role: 'assistant', content: '{"answer": ' }] });
    await expect(spaced).rejects.toThrow(/final assistant content cannot end with trailing whitespace/);
  });

  it('refuses a bad request and a bad key in the shapes the SDK raises', async () => {
    const client = new Anthropic({ baseURL: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    await expect(client.messages.create({ model: 'sim', messages: [{ role: 'user', content: 'x' }] } as never)).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(client.messages.create({ model: 'nope', max_tokens: 3, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    // A thinking budget must leave room for the answer, as Anthropic's API says.
    const budget = await request(server.url, 'POST', '/v1/messages', { model: 'sim', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'x' }] }, as);
    expect([budget.status, budget.body.error.param, budget.body.error.message]).toEqual([400, 'thinking.budget_tokens', 'thinking.budget_tokens: must be less than max_tokens (2000), got 2000']);
    // Anthropic's shape beside the contract's: `type: "error"`, a request id in the body and
    // the `request-id` header (the SDK's `err.request_id`), Anthropic's error types.
    expect(budget.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' }, request_id: budget.headers.get('request-id') });
    const caught = await client.messages.create({ model: 'nope', max_tokens: 3, messages: [{ role: 'user', content: 'x' }] }).catch((err: InstanceType<typeof Anthropic.APIError>) => err);
    expect((caught as InstanceType<typeof Anthropic.APIError>).requestID).toBeTruthy();
    // A body declared past the route's limit is answered at once, before it is sent (sending
    // 51 MB raced the server's answer and closed socket: EPIPE).
    const tooLarge = await declaredTooLarge(server.url, '/v1/messages', 51 * 1024 * 1024, as.authorization);
    expect([tooLarge.status, tooLarge.body.error?.type], JSON.stringify(tooLarge.body)).toEqual([413, 'request_too_large']);
    const wrong = new Anthropic({ baseURL: server.url, apiKey: 'sk-wrongwrongwro', maxRetries: 0 });
    await expect(wrong.messages.create({ model: 'sim', max_tokens: 3, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    // Anthropic's server tools and MCP connector run on Anthropic's side: named, not failed or ignored.
    const serverTool = await request(server.url, 'POST', '/v1/messages', { model: 'sim', max_tokens: 3, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'x' }] }, as);
    expect([serverTool.status, serverTool.body.error?.param], serverTool.text).toEqual([400, 'tools.0.type']);
    expect(serverTool.body.error.message).toContain("one of Anthropic's server tools");
    const mcp = await request(server.url, 'POST', '/v1/messages', { model: 'sim', max_tokens: 3, mcp_servers: [{ type: 'url', url: 'https://example.com/sse', name: 'x' }], messages: [{ role: 'user', content: 'x' }] }, as);
    expect([mcp.status, mcp.body.error?.code, mcp.body.error?.param], mcp.text).toEqual([400, 'field_unsupported', 'mcp_servers']);
    // The OpenAI routes keep the contract's body alone.
    const openai = await request(server.url, 'POST', '/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'x' }] }, as);
    expect(openai.body.type).toBeUndefined();
  });

  it('works with the Python SDK, streamed and not, and counts tokens', () => {
    const script = `
import json, sys, anthropic
client = anthropic.Anthropic(base_url=sys.argv[1], api_key=sys.argv[2], max_retries=0)
whole = client.messages.create(model="sim", max_tokens=6, messages=[{"role": "user", "content": "hi"}])
with client.messages.stream(model="sim", max_tokens=6, messages=[{"role": "user", "content": "hi"}]) as stream:
    streamed = "".join(stream.text_stream)
    final = stream.get_final_message()
counted = client.messages.count_tokens(model="sim", messages=[{"role": "user", "content": "hi there"}]).input_tokens
print(json.dumps({"whole": whole.content[0].text, "streamed": streamed, "stop": final.stop_reason, "out": final.usage.output_tokens, "counted": counted}))
`;
    const out = JSON.parse(execFileSync(venvPython, ['-c', script, server.url, ADMIN_KEY], { encoding: 'utf8', timeout: 60_000 }).trim().split('\n').pop()!);
    expect(out).toEqual({ whole: SIX_WORDS, streamed: SIX_WORDS, stop: 'max_tokens', out: 6, counted: 2 });
  });
});

/** The answer to a POST whose Content-Length says `bytes`, of which none is sent. */
function declaredTooLarge(url: string, path: string, bytes: number, authorization: string): Promise<{ status: number; body: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes), authorization } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}
