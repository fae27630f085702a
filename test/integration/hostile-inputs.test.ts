import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyGguf, tinyGgufRegistration, tinyLlm, tinyLlmRegistration } from './harness/tiny-models.js';

// Quotes its input in its error, as sklearn's and pandas' errors do.
const ECHOER = 'def load():\n    return {}\n\ndef infer(model, data=""):\n    raise ValueError(f"cannot use {data}")\n';

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on `agent` (a pool of one kept-alive socket), with a deadline of its own. */
function send(agent: Agent, url: string, method: string, p: string, body: Buffer | string, headers: Record<string, string>, timeoutMs = 15_000): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ agent, hostname, port, method, path: p, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function multipart(boundary: string, parts: Array<{ name: string; filename?: string; data: string | Buffer }>): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

describe('hostile inputs (issue 29, items 7 to 11)', () => {
  let work: string;
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    work = await makeHome('hangar-hostile-');
    const tiny = tinyLlm();
    await writeFile(path.join(work, 'echoer.py'), ECHOER);
    server = await startServer({ env: { HANGAR_REQUEST_BODY_TIMEOUT_MS: '2000' } });
    api = client(server.url);
    expect((await api.post('/v1/model_registrations/LLM', tinyLlmRegistration('tiny-chat', tiny.path))).status).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'tiny-chat', model_engine: 'Transformers', model_uid: 'llm' })).status).toBe(200);
    const echoer = { model_name: 'echoer', model_uri: path.join(work, 'echoer.py'), launcher: 'python' };
    expect((await api.post('/v1/model_registrations/flexible', { model: echoer, persist: false })).status).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'echoer', model_type: 'flexible', model_uid: 'echoer' })).status).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('starts models whose uid begins with "-" (the runtime\'s argument parser once took it for an option)', async () => {
    for (const [uid, body] of [
      ['-3+4', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator' }],
      ['--help', { model_name: 'echoer', model_type: 'flexible' }],
    ] as const) {
      const launched = await api.post('/v1/models', { ...body, model_uid: uid });
      expect(launched.status, `${uid}: ${launched.text}`).toBe(200);
      expect((await api.delete(`/v1/models/${encodeURIComponent(uid)}`)).status).toBe(200);
    }
  }, 120_000);

  it('refuses a model folder with a named pipe where a file should be, and nothing waits on the pipe', async () => {
    // A pipe opened to read blocks until someone writes: in the control plane it held a
    // libuv worker for good, and the launch, its cancel and its terminate hung with it.
    const tiny = tinyLlm();
    const piped = path.join(work, 'piped');
    await mkdir(piped);
    for (const name of await readdir(tiny.path)) if (name.endsWith('.json')) await copyFile(path.join(tiny.path, name), path.join(piped, name));
    execFileSync('mkfifo', [path.join(piped, 'model.safetensors'), path.join(work, 'model.gguf')]);
    const gguf = tinyGguf();
    expect((await api.post('/v1/model_registrations/LLM', tinyGgufRegistration('tiny-gguf-piped', gguf))).status).toBe(200);
    const agent = new Agent({ keepAlive: false });
    const launch = (body: Record<string, unknown>) => send(agent, server.url, 'POST', '/v1/models', JSON.stringify(body), { 'content-type': 'application/json' }, 120_000);
    // Each refused by the engine that meets the pipe, in the contract's shape.
    const [transformers, llama] = await Promise.all([
      launch({ model_name: 'tiny-chat', model_engine: 'Transformers', model_uid: 'piped-tf', model_path: piped }),
      launch({ model_name: 'tiny-gguf-piped', model_engine: 'llama.cpp', model_format: 'ggufv2', quantization: 'q8_0', model_uid: 'piped-lc', model_path: path.join(work, 'model.gguf') }),
    ]);
    expect([transformers.status, JSON.parse(transformers.body).error.code], transformers.body).toEqual([400, 'model_load_invalid']);
    expect([llama.status, JSON.parse(llama.body).error.code], llama.body).toEqual([400, 'model_load_invalid']);
    expect(JSON.parse(llama.body).detail).toContain('neither a file nor a folder');
    // The failed launch's record says why (failed-launches.ts keeps the newest of them).
    const record = (await api.get('/v1/models/instances?model_uid=piped-tf')).body[0];
    expect(record).toMatchObject({ model_uid: 'piped-tf', status: 'ERROR' });
    agent.destroy();
  }, 150_000);

  it('reads and drops the rest of a multipart upload answered early, so the next request on the kept-alive connection is served', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const boundary = 'hangarboundary';
      const fields = Array.from({ length: 80 }, (_, i) => ({ name: `f${i}`, data: 'x' }));
      const tooMany = multipart(boundary, [...fields, { name: 'file', filename: 'a.wav', data: Buffer.alloc(2 * 1024 * 1024, 1) }]);
      const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` };
      const first = await send(agent, server.url, 'POST', '/v1/audio/transcriptions', tooMany, headers);
      expect(first.status, first.body).toBe(413);
      expect(first.headers.connection).toBe('keep-alive');
      const unknownFile = multipart(boundary, [{ name: 'model', data: 'x' }, { name: 'other', filename: 'b.bin', data: Buffer.alloc(1024 * 1024, 2) }, { name: 'file', filename: 'a.wav', data: 'RIFF' }]);
      const second = await send(agent, server.url, 'POST', '/v1/audio/transcriptions', unknownFile, headers);
      expect(second.status, second.body).toBe(400);
      expect(JSON.parse(second.body).error.param).toBe('other');
      // A file field sent twice is a malformed form (400 naming it), not a large one.
      const twice = multipart(boundary, [{ name: 'model', data: 'x' }, { name: 'file', filename: 'a.wav', data: 'RIFF' }, { name: 'file', filename: 'b.wav', data: 'RIFF' }]);
      const third = await send(agent, server.url, 'POST', '/v1/audio/transcriptions', twice, headers);
      expect([third.status, JSON.parse(third.body).error.code, JSON.parse(third.body).error.param], third.body).toEqual([400, 'invalid_field', 'file']);
      const next = await send(agent, server.url, 'GET', '/status', '', {});
      expect(next.status).toBe(200);
    } finally {
      agent.destroy();
    }
  }, 60_000);

  it('gives each route a body limit that fits it, and keeps the connection serving after refusing a body', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const json = { 'content-type': 'application/json' };
      const launch = await send(agent, server.url, 'POST', '/v1/models', JSON.stringify({ model_name: 'x'.repeat(2 * 1024 * 1024) }), json);
      expect(launch.status, launch.body.slice(0, 300)).toBe(413);
      expect(JSON.parse(launch.body).error.message).toContain('1 MiB limit of /v1/models');
      const completion = await send(agent, server.url, 'POST', '/v1/completions', JSON.stringify({ model: 'llm', prompt: 'a'.repeat(5 * 1024 * 1024) }), json);
      expect(completion.status).toBe(413);
      expect(JSON.parse(completion.body).error.message).toContain('4 MiB limit of /v1/completions');
      expect((await send(agent, server.url, 'GET', '/status', '', {})).status).toBe(200);
    } finally {
      agent.destroy();
    }
  }, 60_000);

  it('refuses a prompt that cannot fit from its size, before tokenizing it', async () => {
    const big = 'lorem ipsum dolor sit amet '.repeat(300_000); // 8.1 MB
    const chat = await api.post('/v1/chat/completions', { model: 'llm', messages: [{ role: 'user', content: big }], max_tokens: 2 });
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toMatch(/The prompt is \d+ bytes, so at least \d+ tokens for this model, which leaves no room in the model's context of 512 tokens/);
    expect(chat.text.length).toBeLessThan(4000);
    // Named as OpenAI names it: the messages of a chat, the prompt of a completion.
    expect(chat.body.error.param).toBe('messages');
    const completion = await api.post('/v1/completions', { model: 'llm', prompt: big.slice(0, 3_000_000), max_tokens: 2 });
    expect(completion.status).toBe(400);
    expect(completion.body.error.message).toContain('bytes, so at least');
    expect(completion.body.error.param).toBe('prompt');
    // Under the byte bound (the tiny vocabulary's longest token is 13 bytes) but long:
    // only its first 8 x 512 characters are tokenized, and they already fill the context.
    const long = await api.post('/v1/completions', { model: 'llm', prompt: 'lorem ipsum '.repeat(2000), max_tokens: 2 });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/The prompt is 24000 characters, and its first 4096 are already \d+ tokens/);
    // A short one that does not fit is measured in tokens.
    const near = await api.post('/v1/completions', { model: 'llm', prompt: 'lorem ipsum '.repeat(60), max_tokens: 2 });
    expect(near.status).toBe(400);
    expect(near.body.error.message).toMatch(/The prompt is \d+ tokens/);
    expect((await api.post('/v1/chat/completions', { model: 'llm', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 })).status).toBe(200);
  }, 60_000);

  it('cuts what errors and logs repeat of the input to at most 1,000 characters a value', async () => {
    const data = 'z'.repeat(5 * 1024 * 1024);
    const res = await api.post('/v1/flexible/infers', { model: 'echoer', data });
    expect(res.status).toBe(400);
    expect(res.text.length).toBeLessThan(4000);
    expect(res.body.detail).toMatch(/cannot use z+… \(\d+ more characters\)/);
    const longest = Math.max(...server.logs.map((l) => JSON.stringify(l).length));
    expect(longest).toBeLessThan(8000);
    expect(server.stderr().split('\n').every((line) => line.length < 8000)).toBe(true);
  }, 60_000);

  it('samples a temperature or top_p of 1e-300 (greedy), and refuses a repetition_penalty that cannot work', async () => {
    const base = { model: 'llm', prompt: 'Once upon a time', max_tokens: 4 };
    const greedy = await api.post('/v1/completions', { ...base, temperature: 0 });
    const tinyTemperature = await api.post('/v1/completions', { ...base, temperature: 1e-300 });
    expect(tinyTemperature.status, tinyTemperature.text).toBe(200);
    expect(tinyTemperature.body.choices[0].text).toBe(greedy.body.choices[0].text);
    const tinyTopP = await api.post('/v1/completions', { ...base, top_p: 1e-300 });
    expect(tinyTopP.status, tinyTopP.text).toBe(200);
    expect(tinyTopP.body.choices[0].text).toBe(greedy.body.choices[0].text);
    for (const value of [1e-300, 0.001]) {
      const refused = await api.post('/v1/completions', { ...base, repetition_penalty: value });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error.param).toBe('repetition_penalty');
    }
    // An empty stop string would end every answer before its first token (vLLM refuses it too).
    for (const [route, body] of [['/v1/completions', { ...base, stop: '' }], ['/v1/chat/completions', { model: 'llm', messages: [{ role: 'user', content: 'Hi' }], stop: ['.', ''] }]] as const) {
      const refused = await api.post(route, body);
      expect([refused.status, refused.body.error?.param], refused.text).toEqual([400, route === '/v1/completions' ? 'stop' : 'stop.1']);
      expect(refused.body.error.message).toContain('must not be empty');
    }
    // chat_template_kwargs as JSON text, as Xinference's client and server take it (it was a 400).
    const asText = await api.post('/v1/chat/completions', { model: 'llm', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, chat_template_kwargs: '{"enable_thinking": false}' });
    expect(asText.status, asText.text).toBe(200);
    for (const bad of ['{"x":', '[1, 2]']) {
      const refused = await api.post('/v1/chat/completions', { model: 'llm', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, chat_template_kwargs: bad });
      expect([refused.status, refused.body.error?.param], bad).toEqual([400, 'chat_template_kwargs']);
    }
    // Through the generate_config of Xinference's client, which skips the HTTP schema.
    const viaConfig = await api.post('/v1/chat/completions', { model: 'llm', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, temperature: 1e-300, top_p: 1e-300 });
    expect(viaConfig.status, viaConfig.text).toBe(200);
  }, 60_000);

  it('checks LoRA adapters at launch, naming the one that is missing or bad, and refuses them where the engine loads none', async () => {
    const launch = (peft: unknown, body: Record<string, unknown> = { model_name: 'tiny-chat', model_engine: 'Transformers' }) =>
      api.post('/v1/models', { ...body, model_uid: 'lora', peft_model_config: peft });
    const missing = await launch({ lora_list: [{ lora_name: 'x', local_path: '/nonexistent' }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('peft_model_config.lora_list.0.local_path');
    expect(missing.body.error.message).toContain('/nonexistent');
    const malformed = await launch({ lora_list: [{ lora_name: 'x' }] });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.param).toBe('peft_model_config.lora_list.0.local_path');
    const twice = await launch({ lora_list: [{ lora_name: 'x', local_path: work }, { lora_name: 'x', local_path: work }] });
    expect(twice.status).toBe(400);
    expect(twice.body.error.param).toBe('peft_model_config.lora_list.1.lora_name');
    // A folder that is not an adapter fails the load, naming the adapter; nothing stays.
    const notAdapter = await launch({ lora_list: [{ lora_name: 'x', local_path: work }] });
    expect(notAdapter.status).toBe(400);
    expect(notAdapter.body.error.message).toContain('LoRA adapter x');
    const unsupported = await launch({ lora_list: [{ lora_name: 'x', local_path: work }] }, { model_name: 'echoer', model_type: 'flexible' });
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error.code).toBe('parameter_unsupported');
    expect(unsupported.body.error.param).toBe('peft_model_config.lora_list');
    // A lora_name on a model launched without adapters is refused, naming that it has none.
    const noAdapters = await api.post('/v1/completions', { model: 'llm', prompt: 'Hi', max_tokens: 2, lora_name: 'x' });
    expect(noAdapters.status).toBe(400);
    expect(noAdapters.body.error).toMatchObject({ code: 'invalid_field', param: 'lora_name' });
    expect(noAdapters.body.error.message).toContain('lora_name: x is not a LoRA adapter of model llm; its adapters: none');
  }, 60_000);

  it('answers 408 and closes a connection whose body trickles in past the body timeout', async () => {
    const { hostname, port } = new URL(server.url);
    const outcome = await new Promise<{ text: string; closed: boolean }>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port) });
      let text = '';
      let sent = 0;
      const trickle = setInterval(() => {
        if (sent < 100 && socket.writable) socket.write('a'), sent++;
      }, 500);
      const deadline = setTimeout(() => {
        clearInterval(trickle);
        socket.destroy();
        resolve({ text, closed: false });
      }, 12_000);
      socket.on('connect', () => socket.write(`POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`));
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(trickle);
        clearTimeout(deadline);
        resolve({ text, closed: true });
      });
    });
    expect(outcome.closed).toBe(true);
    expect(outcome.text).toMatch(/^HTTP\/1\.1 408/);
    expect(outcome.text).toContain('"code":"request_timeout"');
  }, 30_000);
});
