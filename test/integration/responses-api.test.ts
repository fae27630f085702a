import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './harness/processes.js';
import { z } from 'zod';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from './harness/http.js';
import { readSse } from './harness/sse-client.js';
import { makeHome, removeHome, startServer, venvPython, type TestServer } from './harness/server.js';
import { tinyLlm, tinyLlmRegistration } from './harness/tiny-models.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF'; // user1 (admin)
const USER3_KEY = 'sk-m6jEzEwmCc4iQ'; // user3: models:read, another user
// The simulator's first words (python-runtime/hangar_runtime/engines/simulator/text.py).
const words = (n: number): string => ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'].slice(0, n).map((w) => `${w} `).join('');
const WEATHER = { type: 'function' as const, name: 'weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };

/** Events of a raw Responses stream: `event:` names and their JSON data, in order. */
function typedEvents(raw: string[]): Array<Record<string, any>> {
  return raw.map((d) => JSON.parse(d) as Record<string, any>);
}

/**
 * OpenAI's Responses API (docs/responses.md) through the official SDKs unchanged:
 * OpenAI Python and JS, and the Vercel AI SDK's default OpenAI provider; stored
 * responses per user, with auth on.
 */
describe('Responses API (real server, OpenAI SDKs, Vercel AI SDK)', () => {
  let server: TestServer;
  let work: string;
  const as = (key = ADMIN_KEY) => ({ authorization: `Bearer ${key}` });
  const post = (p: string, body: unknown, key = ADMIN_KEY) => request(server.url, 'POST', p, body, as(key));
  const get = (p: string, key = ADMIN_KEY) => request(server.url, 'GET', p, undefined, as(key));

  beforeAll(async () => {
    work = await makeHome('hangar-responses-');
    const authFile = path.join(work, 'auth.json');
    await writeFile(authFile, JSON.stringify(upstreamAuthConfig()));
    const tiny = tinyLlm();
    server = await startServer({ args: ['--auth-config', authFile] });
    expect((await post('/v1/model_registrations/LLM', tinyLlmRegistration('tiny-responses', tiny.path, ['chat', 'generate', 'tools']))).status).toBe(200);
    const launches = await Promise.all([
      post('/v1/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'sim', step_ms: 1, ttft_ms: 0 }),
      post('/v1/models', { model_name: 'tiny-responses', model_engine: 'Transformers', model_uid: 'tiny' }),
    ]);
    for (const l of launches) expect(l.status, l.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('serves the OpenAI Python SDK: text, instructions, a function tool round trip, previous_response_id, store: false, stream', async () => {
    const script = `
import json, sys
import openai
from openai import OpenAI
c = OpenAI(base_url=sys.argv[1] + "/v1", api_key=sys.argv[2], max_retries=0)
out = {}
r = c.responses.create(model="sim", input="hello there", instructions="Be brief.", max_output_tokens=6)
out["text"] = [r.output_text, r.status, r.incomplete_details.reason, r.usage.input_tokens, r.usage.output_tokens, r.output[0].type, r.instructions]
weather = {"type": "function", "name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
first = c.responses.create(model="sim", input="weather in Paris?", tools=[weather], tool_choice="required")
call = first.output[0]
second = c.responses.create(model="sim", previous_response_id=first.id, max_output_tokens=3,
    input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
out["tools"] = [call.type, call.name, json.loads(call.arguments), second.output_text, second.previous_response_id, second.usage.input_tokens]
unstored = c.responses.create(model="sim", input="one two", store=False, max_output_tokens=2)
try:
    c.responses.retrieve(unstored.id)
    out["unstored"] = "found"
except openai.NotFoundError as e:
    out["unstored"] = e.status_code
got = c.responses.retrieve(r.id)
items = c.responses.input_items.list(r.id)
out["stored"] = [got.id == r.id, got.output_text, [(i.type, i.role, i.content[0].text) for i in items.data]]
# What the SDK's types declare, held strictly (the SDK itself builds its objects unchecked).
from openai.types.responses import Response, ResponseFunctionToolCallOutputItem
Response.model_validate(got.to_dict())
given = [i for i in c.responses.input_items.list(second.id).data if i.type == "function_call_output"]
ResponseFunctionToolCallOutputItem.model_validate(given[0].to_dict())
# Only a background response streams again, and there is none: refused, not a JSON body read as no events.
try:
    out["retrieve_stream"] = [e.type for e in c.responses.retrieve(r.id, stream=True)]
except openai.BadRequestError as e:
    out["retrieve_stream"] = [e.status_code, e.code, e.param]
c.responses.delete(r.id)
try:
    c.responses.retrieve(r.id)
    out["deleted"] = "found"
except openai.NotFoundError as e:
    out["deleted"] = e.status_code
for model in ("sim", "tiny"):
    plain = c.responses.create(model=model, input="Say something.", max_output_tokens=8, temperature=0)
    types = []
    with c.responses.stream(model=model, input="Say something.", max_output_tokens=8, temperature=0) as s:
        for event in s:
            types.append([event.type, event.sequence_number])
            # Cut at max_output_tokens, the stream ends with response.incomplete (as
            # OpenAI's does); the SDK's get_final_response() waits for .completed only.
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
    out["stream_" + model] = [plain.output_text, final.output_text, final.status, types]
print(json.dumps(out))
`;
    const { stdout } = await promisify(execFile)(venvPython, ['-c', script, server.url, ADMIN_KEY], { encoding: 'utf8', timeout: 120_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    // "Be brief." + "hello there": four words, the simulator's prompt tokens.
    expect(out.text).toEqual([words(6), 'incomplete', 'max_output_tokens', 4, 6, 'message', 'Be brief.']);
    // The second turn saw the first: "weather in Paris?" (3) and "sunny" (1).
    expect(out.tools).toEqual(['function_call', 'weather', { city: 'bravo' }, words(3), expect.stringMatching(/^resp_/), 4]);
    expect(out.unstored).toBe(404);
    expect(out.stored).toEqual([true, words(6), [['message', 'user', 'hello there']]]);
    expect(out.deleted).toBe(404);
    expect(out.retrieve_stream).toEqual([400, 'field_unsupported', 'stream']);
    for (const model of ['sim', 'tiny']) {
      const [plain, streamed, status, types] = out[`stream_${model}`] as [string, string, string, Array<[string, number]>];
      expect(streamed, model).toBe(plain);
      expect(plain.length, model).toBeGreaterThan(0);
      expect(status).toBe('incomplete');
      const names = types.map((t) => t[0]);
      expect(names.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
      expect(names).toContain('response.output_text.delta');
      expect(names.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
      expect(types.map((t) => t[1])).toEqual(types.map((_, i) => i));
    }
  }, 150_000);

  it('serves the OpenAI JS SDK: create and stream on a real model, the same greedy text', async () => {
    const sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
    const made = await sdk.responses.create({ model: 'tiny', instructions: 'You are terse.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hello!' }] }], max_output_tokens: 6, temperature: 0 });
    expect(made.object).toBe('response');
    expect(made.output_text.length).toBeGreaterThan(0);
    expect(made.usage!.output_tokens).toBeLessThanOrEqual(6);
    const chat = await sdk.chat.completions.create({ model: 'tiny', messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Hello!' }], max_tokens: 6, temperature: 0 });
    // The same request as chat: the mapping loses nothing.
    expect(made.output_text).toBe(chat.choices[0]!.message.content);
    expect(made.usage!.input_tokens).toBe(chat.usage!.prompt_tokens);
    const stream = sdk.responses.stream({ model: 'tiny', instructions: 'You are terse.', input: 'Hello!', max_output_tokens: 6, temperature: 0 });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(made.output_text);
    expect(deltas).toBe(made.output_text);
  });

  it('serves the Vercel AI SDK default provider: generateText, streamText, and a tool step', async () => {
    const openai = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: ADMIN_KEY });
    const generated = await generateText({ model: openai('sim'), prompt: 'hello', maxOutputTokens: 4 });
    expect(generated.text).toBe(words(4));
    expect(generated.finishReason).toBe('length');
    expect(generated.usage.outputTokens).toBe(4);
    const streamed = streamText({ model: openai('sim'), prompt: 'hello', maxOutputTokens: 5 });
    expect(await streamed.text).toBe(words(5));
    expect(await streamed.finishReason).toBe('length');

    const cities: string[] = [];
    const result = await generateText({
      model: openai('sim'),
      prompt: 'What is the weather in Paris?',
      // Room for the simulator's call (a step per word of its JSON).
      maxOutputTokens: 8,
      tools: { weather: tool({ description: 'Weather by city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => (cities.push(city), `sunny in ${city}`) }) },
      toolChoice: 'required',
      // The second step answers in text: the call's id and output go back as items.
      prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: 'none' } : undefined),
      stopWhen: stepCountIs(2),
    });
    expect(cities).toEqual(['bravo']);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolCalls[0]!.toolName).toBe('weather');
    expect(result.text).toBe(words(8));
  });

  it('streams the typed events in order, and a function call as arguments events', async () => {
    const res = await readSse(server.url, '/v1/responses', { model: 'sim', input: 'weather?', tools: [WEATHER], tool_choice: { type: 'function', name: 'weather' }, stream: true }, { headers: as() });
    expect(res.status).toBe(200);
    const events = typedEvents(res.data);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const done = events.at(-1)!.response;
    expect(done.status).toBe('completed');
    expect(done.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'weather', arguments: '{"city": "bravo"}', status: 'completed' })]);
    expect((await get(`/v1/responses/${done.id}`)).body.output).toEqual(done.output);
  });

  it('gzips JSON answers when asked, never a stream', async () => {
    const listed = await fetch(`${server.url}/v1/models`, { headers: { ...as(), 'accept-encoding': 'gzip' } });
    expect(listed.headers.get('content-encoding')).toBe('gzip');
    expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(2); // fetch decompresses
    const made = await fetch(`${server.url}/v1/responses`, { method: 'POST', headers: { ...as(), 'content-type': 'application/json', 'accept-encoding': 'gzip, br' }, body: JSON.stringify({ model: 'sim', input: 'hi', max_output_tokens: 40 }) });
    expect(made.headers.get('content-encoding')).toBe('br');
    expect(((await made.json()) as { output_text: string }).output_text.split(' ')).toHaveLength(41);
    // A short inference answer (under 1 KiB) goes as it is: gzip would cost more CPU than it saves.
    const chat = (maxTokens: number) =>
      fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { ...as(), 'content-type': 'application/json', 'accept-encoding': 'gzip' }, body: JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens }) });
    const short = await chat(3);
    expect(short.headers.get('content-encoding')).toBeNull();
    expect(Number(short.headers.get('content-length'))).toBeLessThan(1024);
    expect((await chat(300)).headers.get('content-encoding')).toBe('gzip');
    for (const [p, body] of [
      ['/v1/responses', { model: 'sim', input: 'hi', max_output_tokens: 40, stream: true }],
      ['/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40, stream: true }],
    ] as const) {
      const res = await readSse(server.url, p, body, { headers: { ...as(), 'accept-encoding': 'gzip, deflate, br' } });
      expect(res.headers['content-encoding'], p).toBeUndefined();
      expect(res.headers['content-type']).toContain('text/event-stream');
      expect(res.data.length).toBeGreaterThan(40);
    }
  });

  it('keeps stored responses to their owner: another user gets 404 for read, items, delete and continuation', async () => {
    const mine = await post('/v1/responses', { model: 'sim', input: 'secret plans', max_output_tokens: 2, metadata: { team: 'a' } });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.metadata).toEqual({ team: 'a' });
    const id = mine.body.id as string;
    const itemId = mine.body.output[0].id as string;
    for (const [method, p, body] of [
      ['GET', `/v1/responses/${id}`, undefined],
      ['GET', `/v1/responses/${id}/input_items`, undefined],
      ['DELETE', `/v1/responses/${id}`, undefined],
      ['POST', '/v1/responses', { model: 'sim', previous_response_id: id, input: 'more' }],
      ['POST', '/v1/responses', { model: 'sim', input: [{ type: 'item_reference', id: itemId }] }],
      ['POST', `/v1/responses/${id}/cancel`, undefined],
    ] as const) {
      const res = await request(server.url, method, p, body, as(USER3_KEY));
      expect(res.status, `${method} ${p}: ${res.text}`).toBe(404);
      expect(['response_not_found', 'response_item_not_found']).toContain(res.body.error.code);
    }
    // Still the owner's, whole; and its output item can be referenced by its owner.
    expect((await get(`/v1/responses/${id}`)).body.output_text).toBe(words(2));
    const referenced = await post('/v1/responses', { model: 'sim', input: [{ type: 'item_reference', id: itemId }, { role: 'user', content: 'go on' }], max_output_tokens: 1 });
    expect(referenced.status, referenced.text).toBe(200);
    expect(referenced.body.usage.input_tokens).toBe(4); // "alpha bravo" + "go on"
    // Without credentials: 401, not a leak.
    expect((await request(server.url, 'GET', `/v1/responses/${id}`)).status).toBe(401);
    // The SDKs' responses.cancel: only background responses are, and none runs here (was a 404 route_not_found).
    const cancel = await request(server.url, 'POST', `/v1/responses/${id}/cancel`, undefined, as());
    expect([cancel.status, cancel.body.error?.code], cancel.text).toEqual([400, 'response_not_cancellable']);
  });

  it('counts usage for a database API key, and its stored responses are its owner\'s', async () => {
    const created = await post('/v1/admin/keys', { name: 'responses-usage' });
    expect(created.status, created.text).toBe(201);
    const key = created.body.key as string;
    const made = await post('/v1/responses', { model: 'sim', input: 'count these three', max_output_tokens: 5 }, key);
    expect(made.status, made.text).toBe(200);
    const usage = await get(`/v1/admin/usage?key_id=${created.body.id}`);
    expect(usage.body).toEqual([expect.objectContaining({ model: 'sim', requests: 1, prompt_tokens: 3, completion_tokens: 5, errors: 0 })]);
    // The key belongs to user1: user1's other credentials see the response, user3's do not.
    expect((await get(`/v1/responses/${made.body.id}`)).status).toBe(200);
    expect((await get(`/v1/responses/${made.body.id}`, USER3_KEY)).status).toBe(404);
  });

  it('hands chat\'s sampling extras on: stop ends the text where chat\'s would', async () => {
    const input = 'Count with me';
    const plain = await post('/v1/responses', { model: 'tiny', input, max_output_tokens: 12, temperature: 0 });
    expect(plain.status, plain.text).toBe(200);
    const text = plain.body.output_text as string;
    // A stop string from inside the greedy answer: the text ends before it, as on chat.
    const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 2);
    const stopped = await post('/v1/responses', { model: 'tiny', input, max_output_tokens: 12, temperature: 0, stop: [stop] });
    const chat = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: input }], max_tokens: 12, temperature: 0, stop: [stop] });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.output_text).toBe(chat.body.choices[0].message.content);
    expect((stopped.body.output_text as string).length).toBeLessThan(text.length);
    expect(text.startsWith(stopped.body.output_text as string)).toBe(true);
    const biased = await post('/v1/responses', { model: 'tiny', input, max_output_tokens: 4, temperature: 0, top_k: 1, repetition_penalty: 1.3 });
    expect(biased.status, biased.text).toBe(200);
  });

  it('pages input items in either order', async () => {
    const input = ['one', 'two', 'three', 'four', 'five'].map((text) => ({ role: 'user', content: text }));
    const made = await post('/v1/responses', { model: 'sim', input, max_output_tokens: 1 });
    const id = made.body.id as string;
    const first = await get(`/v1/responses/${id}/input_items?limit=2&order=asc`);
    expect(first.body.data.map((i: { content: Array<{ text: string }> }) => i.content[0]!.text)).toEqual(['one', 'two']);
    expect(first.body.has_more).toBe(true);
    const next = await get(`/v1/responses/${id}/input_items?limit=10&order=asc&after=${first.body.last_id}`);
    expect(next.body.data.map((i: { content: Array<{ text: string }> }) => i.content[0]!.text)).toEqual(['three', 'four', 'five']);
    expect(next.body.has_more).toBe(false);
    const newest = await get(`/v1/responses/${id}/input_items?limit=1`);
    expect(newest.body.data[0].content[0].text).toBe('five');
    expect((await get(`/v1/responses/${id}/input_items?limit=0`)).status).toBe(400);
  });

  it('refuses what it cannot do, naming the field, and stores nothing for a refusal', async () => {
    const cases: Array<[body: Record<string, unknown>, status: number, code: string, param: string]> = [
      [{ model: 'sim', input: 'x', tools: [{ type: 'web_search' }] }, 400, 'field_unsupported', 'tools.0.type'],
      [{ model: 'sim', input: 'x', tools: [{ type: 'function' }] }, 400, 'invalid_field', 'tools.0.name'],
      [{ model: 'sim', input: 'x', background: true }, 400, 'field_unsupported', 'background'],
      [{ model: 'sim', input: 'x', background: 'yes' }, 400, 'invalid_field', 'background'],
      [{ model: 'sim', input: 'x', max_tool_calls: 'many' }, 400, 'invalid_field', 'max_tool_calls'],
      [{ model: 'sim', input: 'x', conversation: 'conv_1' }, 400, 'field_unsupported', 'conversation'],
      [{ model: 'sim', input: 'x', reasoning: { effort: 'high' } }, 400, 'field_unsupported', 'reasoning'],
      // OpenAI's values only: another was echoed back as the response's reasoning.effort.
      [{ model: 'sim', input: 'x', reasoning: { effort: 'bogus' } }, 400, 'invalid_field', 'reasoning.effort'],
      [{ model: 'sim', input: 'x', reasoning: { summary: 'long' } }, 400, 'invalid_field', 'reasoning.summary'],
      [{ model: 'sim', input: 'x', truncation: 'auto' }, 400, 'field_unsupported', 'truncation'],
      [{ model: 'tiny', input: 'x', text: { format: { type: 'json_schema', name: 'n', schema: { type: 'object' } } } }, 400, 'parameter_unsupported', 'text.format'],
      [{ model: 'tiny', input: 'x', tools: [WEATHER], tool_choice: 'required' }, 400, 'parameter_unsupported', 'tool_choice'],
      [{ model: 'sim', input: 'x', tool_choice: 'required' }, 400, 'invalid_field', 'tool_choice'],
      [{ model: 'sim', input: 'x', tools: [WEATHER], tool_choice: { type: 'function', name: 'nope' } }, 400, 'invalid_field', 'tool_choice'],
      [{ model: 'sim', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 400, 'field_unsupported', 'input.0.content.0.type'],
      [{ model: 'sim', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] }, 400, 'field_unsupported', 'input.0.content.0.file_id'],
      [{ model: 'sim', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 400, 'invalid_field', 'input.0.content.0.text'],
      [{ model: 'sim', input: [{ role: 'robot', content: 'x' }] }, 400, 'invalid_field', 'input.0.role'],
      [{ model: 'sim', input: [{ type: 'computer_call' }] }, 400, 'field_unsupported', 'input.0.type'],
      [{ model: 'sim', input: [{ type: 'function_call', call_id: 'c1', arguments: '{}' }] }, 400, 'invalid_field', 'input.0.name'],
      [{ model: 'sim', input: [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: { a: 1 } }] }, 400, 'invalid_field', 'input.0.arguments'],
      [{ model: 'sim', input: [{ type: 'function_call_output', output: 'x' }] }, 400, 'invalid_field', 'input.0.call_id'],
      // OpenAI's pairing of calls and outputs: a lost output, a mistyped call_id.
      [{ model: 'sim', input: [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { role: 'user', content: 'never mind' }] }, 400, 'invalid_field', 'input.0'],
      [{ model: 'sim', input: [{ role: 'user', content: 'x' }, { type: 'function_call_output', call_id: 'nope', output: 'x' }] }, 400, 'invalid_field', 'input.1'],
      [{ model: 'sim', input: [{ type: 'item_reference', id: 'msg_nope' }] }, 404, 'response_item_not_found', 'input.0.id'],
      [{ model: 'sim', input: [] }, 400, 'invalid_field', 'input'],
      [{ model: 'sim', input: 'x', include: ['bogus.thing'] }, 400, 'invalid_field', 'include.0'],
      [{ model: 'sim', input: 'x', previous_response_id: 'r'.repeat(300) }, 400, 'invalid_field', 'previous_response_id'],
      [{ model: 'sim', input: 'x', previous_response_id: 'resp_nope' }, 404, 'response_not_found', 'previous_response_id'],
      [{ model: 'sim', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }] }] }, 400, 'ability_missing', 'input'],
      [{ model: 'nope', input: 'x' }, 404, 'model_not_found', 'model'],
      [{ model: 'sim', input: 'x', max_output_tokens: 0 }, 400, 'invalid_field', 'max_output_tokens'],
      [{ model: 'sim', input: 'x', metadata: { k: 1 } }, 400, 'invalid_field', 'metadata.k'],
      // Chat's names for Responses fields, and chat's n: refused with the name to use, not dropped.
      [{ model: 'sim', input: 'x', max_tokens: 5 }, 400, 'field_unsupported', 'max_tokens'],
      [{ model: 'sim', input: 'x', messages: [{ role: 'user', content: 'x' }] }, 400, 'field_unsupported', 'messages'],
      // A chat body as it is (no input): told to send input, not only that input is missing.
      [{ model: 'sim', messages: [{ role: 'user', content: 'x' }] }, 400, 'field_unsupported', 'messages'],
      [{ model: 'sim' }, 400, 'invalid_field', 'input'],
      [{ model: 'sim', input: 'x', response_format: { type: 'json_object' } }, 400, 'field_unsupported', 'response_format'],
      [{ model: 'sim', input: 'x', logprobs: true }, 400, 'field_unsupported', 'logprobs'],
      [{ model: 'sim', input: 'x', n: 2 }, 400, 'field_unsupported', 'n'],
      // Chat's sampling extras go to the chat request: the simulator does not sample, so as on chat.
      [{ model: 'sim', input: 'x', top_k: 5 }, 400, 'parameter_unsupported', 'top_k'],
      [{ model: 'sim', input: 'x', frequency_penalty: 0.5 }, 400, 'parameter_unsupported', 'frequency_penalty'],
      [{ model: 'tiny', input: 'x', stop: Array(17).fill('a') }, 400, 'invalid_field', 'stop'],
      [{ model: 'tiny', input: 'x', guided_json: { type: 'object' } }, 400, 'parameter_unsupported', 'guided_json'],
      // Dropped before, with the response echoing a tier and verbosity no one served.
      [{ model: 'sim', input: 'x', service_tier: 'flex' }, 400, 'parameter_unsupported', 'service_tier'],
      [{ model: 'tiny', input: 'x', text: { verbosity: 'low' } }, 400, 'parameter_unsupported', 'text.verbosity'],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await post('/v1/responses', body);
      expect(res.status, `${JSON.stringify(body).slice(0, 200)}: ${res.text}`).toBe(status);
      expect(res.body.error, JSON.stringify(body).slice(0, 200)).toMatchObject({ code, param });
    }
    // In this API's words, not chat's.
    expect((await post('/v1/responses', { model: 'sim', input: [] })).body.error.message).toContain('input: must hold at least one item');
    // What OpenAI's SDKs ask for besides (include's own values are taken; the one that changes nothing here too).
    expect((await post('/v1/responses', { model: 'sim', input: 'x', max_output_tokens: 2, include: ['reasoning.encrypted_content'] })).status).toBe(200);
  });

  it("counts a request's input tokens as its usage does (responses.input_tokens.count), with the same refusals", async () => {
    const body = { model: 'tiny', instructions: 'Be brief.', input: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER] };
    const made = await post('/v1/responses', { ...body, max_output_tokens: 2 });
    expect(made.status, made.text).toBe(200);
    const counted = await post('/v1/responses/input_tokens', body);
    expect(counted.status, counted.text).toBe(200);
    expect(counted.body).toEqual({ object: 'response.input_tokens', input_tokens: made.body.usage.input_tokens });
    // The OpenAI SDK's own call; a refused field is refused here too, by name. (It was a 405.)
    const refused = await post('/v1/responses/input_tokens', { ...body, background: true });
    expect([refused.status, refused.body.error?.param]).toEqual([400, 'background']);
    expect((await post('/v1/responses/input_tokens', { model: 'nope', input: 'x' })).status).toBe(404);
  });

  it('takes what asks for nothing: no reasoning from a model without it, the default verbosity and tier', async () => {
    const res = await post('/v1/responses', { model: 'sim', input: 'x', max_output_tokens: 2, reasoning: { effort: 'none' }, text: { verbosity: 'medium' }, service_tier: 'auto' });
    expect(res.status, res.text).toBe(200);
  });

  it('stores nothing for a stream its client leaves, not a cut answer marked completed', async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { ...as(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim', input: 'long', max_output_tokens: 100_000, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('response.output_text.delta')) text += new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"(resp_[^"]+)"/.exec(text)![1]!;
    controller.abort();
    await reader.cancel().catch(() => {});
    const idle = await waitFor(async () => (await get('/v1/models/sim/replicas')).body[0].in_flight === 0, 10_000);
    expect(idle).toBe(true);
    expect((await get(`/v1/responses/${id}`)).status).toBe(404);
  });

  it('is aborted by request id like chat: the stream ends with response.failed, and nothing is stored', async () => {
    const pending = readSse(server.url, '/v1/responses', { model: 'sim', input: 'long', max_output_tokens: 100_000, stream: true, request_id: 'resp-abort-1' }, { headers: as() });
    let aborted: unknown;
    for (let i = 0; i < 100 && aborted !== 'DONE'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      aborted = (await post('/v1/models/sim/requests/resp-abort-1/abort', {})).body?.msg;
    }
    expect(aborted).toBe('DONE');
    const res = await pending;
    const events = typedEvents(res.data);
    const last = events.at(-1)!;
    expect(last.type).toBe('response.failed');
    expect(last.response.error.code).toBe('request_aborted');
    expect((await get(`/v1/responses/${last.response.id}`)).status).toBe(404);
  });
});
