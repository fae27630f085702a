import { execFileSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, venvPython, type TestServer } from './harness/server.js';
import { jsonEvents, readSse } from './harness/sse-client.js';

// The simulator's answer of n tokens (python-runtime/hangar_runtime/engines/simulator/text.py).
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliett', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa'];
const answer = (n: number): string => Array.from({ length: n }, (_, i) => `${WORDS[i % WORDS.length]} `).join('');

const contentOf = (events: Array<Record<string, any>>): string => events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('');
const contentEvents = (events: Array<Record<string, any>>) => events.filter((e) => e.choices?.[0]?.delta?.content);

// A reader whose socket takes little (a 4 KiB receive buffer) and who reads nothing for
// a while: the server's writes back up, which is what coalescing is for.
const SLOW_READER = `
import json, socket, sys, time
host, port, body = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
time.sleep(3)
data = b""
while True:
    part = s.recv(65536)
    if not part:
        break
    data += part
sys.stdout.write(data.decode())
`;

describe('token relay (simulator engine, real runtime and server)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;

  const launch = async (uid: string, options: Record<string, unknown>) => {
    const res = await api.post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: uid, ...options });
    expect(res.status, res.text).toBe(200);
  };

  beforeAll(async () => {
    work = await makeHome('hangar-relay-');
    server = await startServer();
    api = client(server.url);
    await launch('sim', { step_ms: 2, ttft_ms: 0, max_batch: 512 });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('answers the documented text byte for byte, streamed or not, with exact usage', async () => {
    const messages = [{ role: 'user', content: 'four words of prompt' }];
    const whole = await api.post('/v1/chat/completions', { model: 'sim', messages, max_tokens: 20 });
    expect(whole.body.choices[0].message.content).toBe(answer(20));
    expect(whole.body.choices[0].finish_reason).toBe('length');
    expect(whole.body.usage).toEqual({ prompt_tokens: 4, completion_tokens: 20, total_tokens: 24 });

    const streamed = await readSse(server.url, '/v1/chat/completions', { model: 'sim', messages, max_tokens: 20, stream: true, stream_options: { include_usage: true } });
    const events = jsonEvents(streamed);
    expect(streamed.data.at(-1)).toBe('[DONE]');
    expect(contentOf(events)).toBe(answer(20));
    expect(events.at(-2)?.choices[0].finish_reason).toBe('length');
    expect(events.at(-1)?.usage).toEqual({ prompt_tokens: 4, completion_tokens: 20, total_tokens: 24 });

    const completion = await readSse(server.url, '/v1/completions', { model: 'sim', prompt: 'one two', max_tokens: 7, stream: true, stop: ['echo'] });
    const texts = jsonEvents(completion).map((e) => e.choices[0].text).join('');
    expect(texts).toBe('alpha bravo charlie delta ');
    expect(jsonEvents(completion).at(-1)?.choices[0].finish_reason).toBe('stop');
  });

  it('gives a fast reader one token per event, in one write per step', async () => {
    const result = await readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'x' }], max_tokens: 50, stream: true });
    const events = jsonEvents(result);
    expect(contentEvents(events)).toHaveLength(50);
    expect(contentEvents(events).every((e, i) => e.choices[0].delta.content === `${WORDS[i % 16]} `)).toBe(true);
  });

  it('merges what queued up for a slow reader into fewer chunks with the same text, logprobs, finish and usage', async () => {
    const url = new URL(server.url);
    // About 1.5 KiB per token (20 alternatives each): 6,000 tokens are more than the
    // kernel's socket buffers hold (4 MiB at most here), so the server's writes back up.
    await launch('sim-fast', { step_ms: 0, max_batch: 8 });
    const body = JSON.stringify({
      model: 'sim-fast', messages: [{ role: 'user', content: 'slow reader' }], max_tokens: 6000, stream: true,
      logprobs: true, top_logprobs: 20, stream_options: { include_usage: true },
    });
    const script = path.join(work, 'slow_reader.py');
    await writeFile(script, SLOW_READER);
    const raw = execFileSync(venvPython, [script, url.hostname, url.port, body], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
    const payload = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    // Chunked transfer encoding: strip the chunk-size lines before reading events.
    const unchunked = dechunk(payload);
    const data = unchunked.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(data.at(-1)).toBe('[DONE]');
    const events = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, any>);
    const content = contentEvents(events);
    expect(contentOf(events)).toBe(answer(6000));
    expect(content.length).toBeLessThan(6000); // merged while the reader was not reading
    const logprobs = events.flatMap((e) => e.choices?.[0]?.logprobs?.content ?? []);
    expect(logprobs.map((l: any) => l.token).join('')).toBe(answer(6000));
    expect(logprobs.every((l: any) => l.top_logprobs.length === 20)).toBe(true);
    expect(events.filter((e) => e.choices?.[0]?.finish_reason)).toHaveLength(1);
    expect(events.filter((e) => e.choices?.[0]?.finish_reason)[0]!.choices[0].finish_reason).toBe('length');
    expect(events.at(-1)?.usage).toEqual({ prompt_tokens: 2, completion_tokens: 6000, total_tokens: 6002 });
  });

  it('relays each choice of an n > 1 stream the same way: merged per choice for a slow reader, spaced by stream_interval', async () => {
    const url = new URL(server.url);
    await launch('sim-choices', { step_ms: 0, max_batch: 8 });
    const body = JSON.stringify({ model: 'sim-choices', messages: [{ role: 'user', content: 'slow reader' }], max_tokens: 3000, n: 2, stream: true, logprobs: true, top_logprobs: 20, stream_options: { include_usage: true } });
    const script = path.join(work, 'slow_reader.py');
    await writeFile(script, SLOW_READER);
    const raw = execFileSync(venvPython, [script, url.hostname, url.port, body], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
    const data = dechunk(raw.slice(raw.indexOf('\r\n\r\n') + 4)).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(data.at(-1)).toBe('[DONE]');
    const events = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, any>);
    for (const index of [0, 1]) {
      const mine = events.filter((e) => e.choices?.[0]?.index === index);
      expect(mine.map((e) => e.choices[0].delta.content ?? '').join('')).toBe(answer(3000));
      expect(mine.filter((e) => e.choices[0].delta.content).length).toBeLessThan(3000); // merged while the reader was not reading
      expect(mine.flatMap((e) => e.choices[0].logprobs?.content ?? []).map((l: any) => l.token).join('')).toBe(answer(3000));
      expect(mine.filter((e) => e.choices[0].finish_reason).map((e) => e.choices[0].finish_reason)).toEqual(['length']);
    }
    expect(events.at(-1)?.usage).toEqual({ prompt_tokens: 2, completion_tokens: 6000, total_tokens: 6002 });

    const spaced = await readSse(server.url, '/v1/completions', { model: 'sim', prompt: 'x', max_tokens: 12, n: 2, stream: true, stream_options: { stream_interval: 5 } });
    for (const index of [0, 1]) {
      const texts = jsonEvents(spaced).filter((e) => e.choices[0]?.index === index).map((e) => e.choices[0].text as string);
      expect(texts.join('')).toBe(answer(12));
      expect(texts.map((t) => t.split(' ').length - 1)).toEqual([5, 5, 2]);
    }
  });

  it('starts a stream of more choices than the engine has slots with the first choice, not when the last one gets a slot', async () => {
    // One slot, two choices of 100,000 tokens at 20 ms a step: the second choice waits
    // ~33 minutes for the first to end. The stream must flow meanwhile (choices-relay.ts:
    // the headers go 250 ms after the first choice's first chunk). Before, it sent
    // nothing, headers included, until every choice had begun, and this test timed out.
    await launch('sim-one-slot', { step_ms: 20, ttft_ms: 0, max_batch: 1 });
    const body = { model: 'sim-one-slot', prompt: 'x', max_tokens: 100_000, n: 2, stream: true };
    const result = await readSse(server.url, '/v1/completions', body, { stopAfter: 5 });
    expect(result.status).toBe(200);
    const events = jsonEvents(result);
    expect(events).toHaveLength(5);
    expect(events.map((e) => e.choices[0].index)).toEqual([0, 0, 0, 0, 0]);
    expect(events.map((e) => e.choices[0].text).join('')).toBe(answer(5));
    // Both generations are ended when the client leaves, the one still waiting for its slot too.
    const drained = await waitFor(async () => (await runtimeQueueDepth(api, 'sim-one-slot')) === 0, 20_000);
    expect(drained).toBe(true);
  });

  it("refuses n choices that would send a large prompt to the runtime more than 64 MiB in all, naming n and what fits", async () => {
    // Each choice is a call carrying the whole prompt (a 15 MiB image with n 64 stalled the
    // control plane past every runtime's heartbeat).
    const messages = [{ role: 'user', content: 'x'.repeat(9 * 1024 * 1024) }];
    const many = await api.post('/v1/chat/completions', { model: 'sim', messages, n: 8, max_tokens: 1 });
    expect([many.status, many.body.error?.code, many.body.error?.param], many.text.slice(0, 300)).toEqual([400, 'invalid_field', 'n']);
    expect(many.body.error.message).toMatch(/^n: 8 choices would send the prompt \(9\.0 MiB with its images\) to the model 8 times, 72\.0 MiB in all; at most 64\.0 MiB per request, so n up to 7 for this prompt/);
    const two = await api.post('/v1/chat/completions', { model: 'sim', messages, n: 2, max_tokens: 1 });
    expect([two.status, two.body.choices?.length], two.text.slice(0, 300)).toEqual([200, 2]);
  });

  it('sends one event per stream_interval tokens when a request asks for it', async () => {
    const result = await readSse(server.url, '/v1/completions', { model: 'sim', prompt: 'x', max_tokens: 22, stream: true, stream_options: { stream_interval: 5 } });
    const texts = jsonEvents(result).map((e) => e.choices[0].text as string);
    expect(texts.join('')).toBe(answer(22));
    // 4 events of 5 tokens, then the last 2 with the finish reason.
    expect(texts.slice(0, 4).every((t) => t.split(' ').length - 1 === 5)).toBe(true);
    expect(texts).toHaveLength(5);
    const bad = await api.post('/v1/completions', { model: 'sim', prompt: 'x', stream: true, stream_options: { stream_interval: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('stream_interval');
  });

  it('sends one event per --stream-interval tokens on every stream of a server started with it', async () => {
    const spaced = await startServer({ args: ['--stream-interval', '4'] });
    try {
      const res = await client(spaced.url).post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 's', step_ms: 1 });
      expect(res.status, res.text).toBe(200);
      const result = await readSse(spaced.url, '/v1/chat/completions', { model: 's', messages: [{ role: 'user', content: 'x' }], max_tokens: 12, stream: true });
      const content = contentEvents(jsonEvents(result)).map((e) => e.choices[0].delta.content as string);
      expect(content).toEqual([answer(4), answer(8).slice(answer(4).length), answer(12).slice(answer(8).length)]);
      // A request's own interval wins over the server's.
      const own = await readSse(spaced.url, '/v1/chat/completions', { model: 's', messages: [{ role: 'user', content: 'x' }], max_tokens: 3, stream: true, stream_options: { stream_interval: 1 } });
      expect(contentEvents(jsonEvents(own))).toHaveLength(3);
    } finally {
      await spaced.stop();
      await removeHome(spaced.home);
    }
  });

  it('ends the connection after [DONE] for a client that asked for Connection: close, and keeps it for keep-alive', async () => {
    const body = { model: 'sim', prompt: 'x', max_tokens: 3, stream: true };
    const closing = await readSse(server.url, '/v1/completions', body, { headers: { connection: 'close' } });
    expect(closing.data.at(-1)).toBe('[DONE]');
    expect(closing.headers.connection).toBe('close');
    expect(closing.socketClosed).toBe(true);
    const agent = new http.Agent({ keepAlive: true });
    try {
      const kept = await readSse(server.url, '/v1/completions', body, { agent });
      expect(kept.data.at(-1)).toBe('[DONE]');
      expect(kept.socketClosed).toBe(false);
    } finally {
      agent.destroy();
    }
  });

  it("carries x-request-id on streamed responses, echoing the caller's", async () => {
    const mine = await readSse(server.url, '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'x' }], max_tokens: 2, stream: true }, { headers: { 'x-request-id': 'trace-42' } });
    expect(mine.headers['x-request-id']).toBe('trace-42');
    expect(mine.headers['content-type']).toMatch(/^text\/event-stream/);
    const generated = await readSse(server.url, '/v1/completions', { model: 'sim', prompt: 'x', max_tokens: 2, stream: true });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('ends all 256 concurrent streams when clients leave, and the runtime stops generating for them', async () => {
    await launch('sim-slow', { step_ms: 20, max_batch: 256 });
    const body = { model: 'sim-slow', prompt: 'x', max_tokens: 100_000, stream: true };
    const started = Array.from({ length: 256 }, () => readSse(server.url, '/v1/completions', body, { stopAfter: 3 }));
    const results = await Promise.all(started);
    expect(results.every((r) => r.status === 200 && r.data.length >= 3)).toBe(true);
    // Every call the runtime held is answered (aborted): its queue drains to zero.
    const drained = await waitFor(async () => (await runtimeQueueDepth(api, 'sim-slow')) === 0, 20_000);
    expect(drained).toBe(true);
  });

  it('stops a stream queued behind another answer on a pipelined connection when the client leaves', async () => {
    await launch('sim-piped', { step_ms: 20, max_batch: 8 });
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    const post = (route: string, body: unknown) => {
      const json = JSON.stringify(body);
      return `POST ${route} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
    };
    // The first answer takes 20 s; the stream behind it cannot be sent before, but generates.
    socket.write(post('/v1/chat/completions', { model: 'sim-piped', messages: [{ role: 'user', content: 'x' }], max_tokens: 1000 }) + post('/v1/completions', { model: 'sim-piped', prompt: 'x', max_tokens: 100_000, stream: true }));
    expect(await waitFor(async () => (await runtimeQueueDepth(api, 'sim-piped')) === 2, 20_000)).toBe(true);
    socket.destroy();
    // Both calls end: the queued stream's response never says 'close', its connection does
    // (it generated on, buffered, until the 60 s stall timer).
    expect(await waitFor(async () => (await runtimeQueueDepth(api, 'sim-piped')) === 0, 20_000)).toBe(true);
  });

  it('ends all 256 streams with an error event when the runtime dies mid-stream', async () => {
    await launch('sim-crash', { step_ms: 20, max_batch: 256 });
    const pid = (await api.get('/v1/models/sim-crash/replicas')).body?.[0]?.pid as number | undefined;
    const pids = pid ? [pid] : [];
    expect(pids).toHaveLength(1);
    const body = { model: 'sim-crash', prompt: 'x', max_tokens: 100_000, stream: true };
    const streams = Array.from({ length: 256 }, () => readSse(server.url, '/v1/completions', body));
    await waitFor(async () => (await runtimeQueueDepth(api, 'sim-crash')) >= 256, 20_000);
    process.kill(pids[0]!, 'SIGKILL');
    const results = await Promise.all(streams);
    for (const result of results) {
      const last = JSON.parse(result.data.at(-1)!) as Record<string, any>;
      expect(last.error?.message).toMatch(/sim-crash/);
    }
  });

  it('refuses a runtime that speaks protocol 1 with the documented answer', async () => {
    // The real runtime, told to say version 1 in its HELLO: an older Hangar's runtime.
    const wrapper = path.join(work, 'python-v1');
    await writeFile(
      wrapper,
      `#!/bin/sh\nshift 2\nexec "${venvPython}" -c 'import sys, runpy, hangar_runtime.protocol as p; p.PROTOCOL_VERSION = 1; sys.argv[0] = "hangar_runtime"; runpy.run_module("hangar_runtime", run_name="__main__")' "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    const old = await startServer({ env: { HANGAR_PYTHON: wrapper } });
    try {
      const res = await client(old.url).post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'old' });
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.text).toContain('protocol 1');
      expect(res.text).toContain('npm run setup');
    } finally {
      await old.stop();
      await removeHome(old.home);
    }
  });
});

async function runtimeQueueDepth(api: ReturnType<typeof client>, uid: string): Promise<number> {
  const metrics = (await api.get('/metrics')).text;
  const line = metrics.split('\n').find((l) => l.startsWith('hangar_model_queue_depth{') && l.includes(`model="${uid}"`));
  return line ? Number(line.split(' ').at(-1)) : -1;
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) return out;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}
