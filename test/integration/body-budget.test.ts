import { request as httpRequest, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { removeHome, startServer, type TestServer } from './harness/server.js';

const MiB = 1024 * 1024;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Started {
  req: ClientRequest;
  answer: Promise<{ status: number; body: string }>;
}

/** A chat request that declares `body.length` bytes and sends the first `sent` of them now. */
function startBody(url: string, body: Buffer, sent: number, headers: Record<string, string> = {}): Started {
  const { hostname, port } = new URL(url);
  let req!: ClientRequest;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = httpRequest({ hostname, port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', reject);
  });
  req.write(body.subarray(0, sent));
  return { req, answer };
}

/** A valid chat body of exactly `bytes` bytes, for a model that is not there (404 once read). */
function bodyOf(bytes: number): Buffer {
  const head = '{"model":"absent","messages":[{"role":"user","content":"';
  const tail = '"}]}';
  return Buffer.from(head + 'x'.repeat(bytes - head.length - tail.length) + tail);
}

describe('a budget on the request bodies held at once (HANGAR_MAX_INFLIGHT_BODY_BYTES)', () => {
  let server: TestServer;
  const chat = (bytes: number) => client(server.url).post('/v1/chat/completions', JSON.parse(bodyOf(bytes).toString()));

  beforeAll(async () => {
    server = await startServer({ env: { HANGAR_MAX_INFLIGHT_BODY_BYTES: String(1 * MiB) } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
  });

  it('answers 503 server_busy to the body that would pass it, counting bytes that arrived, and lets requests in again once bodies are answered', async () => {
    // A slow upload holds what it has sent: 600 KiB less a byte.
    const slow = startBody(server.url, bodyOf(600 * 1024), 600 * 1024 - 1);
    await pause(300);
    const refused = await chat(600 * 1024);
    expect([refused.status, refused.body.error?.code], refused.text).toEqual([503, 'server_busy']);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error.message).toMatch(/holds \d+(\.\d)? KiB of request bodies in flight, and this body's next bytes would take them past the budget of 1 MiB/);
    // Small bodies still fit beside it; a request alone always gets in, whatever its size within its route's limit.
    expect((await chat(1024)).status).toBe(404);
    slow.req.end(bodyOf(600 * 1024).subarray(600 * 1024 - 1));
    expect((await slow.answer).status).toBe(404);
    expect((await chat(2 * MiB)).status).toBe(404);
    // A declared length holds nothing: a connection that declares 50 MiB and sends a byte takes no one's room.
    const declared = startBody(server.url, bodyOf(50 * MiB - 1024), 1);
    await pause(300);
    expect((await chat(900 * 1024)).status).toBe(404);
    declared.req.destroy();
    await declared.answer.catch(() => undefined);
    // Multipart uploads are read by their own parser, beside the budget: a 300 KiB file is read and answered (it hung).
    const form = new FormData();
    form.append('model', 'absent');
    form.append('file', new Blob([Buffer.concat([Buffer.from('RIFF\u0000\u0000\u0000\u0000WAVE', 'latin1'), Buffer.alloc(300 * 1024)])]), 'speech.wav');
    const upload = await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', body: form, signal: AbortSignal.timeout(15_000) });
    expect(upload.status).toBe(404);
  });

  it('gives back what a client held when it leaves mid-upload, when its queued answer never goes out, and for inflated bytes', async () => {
    const gone = startBody(server.url, bodyOf(600 * 1024), 600 * 1024 - 1);
    await pause(300);
    gone.req.destroy();
    await gone.answer.catch(() => undefined);
    await pause(300);
    expect((await chat(600 * 1024)).status).toBe(404);
    // Two requests pipelined on one connection, which closes while the first (a slow
    // model's answer) is pending: the second's answer, queued behind it, never says
    // 'close'; its bytes come back anyway.
    const launched = await client(server.url).post('/v1/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'slow', ttft_ms: 3000 });
    expect(launched.status, launched.text).toBe(200);
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    const request = (b: Buffer) => Buffer.concat([Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n`), b]);
    const first = Buffer.from(JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }));
    // The second asks the model too: its lease, queued, came back only with its answer (never).
    socket.write(Buffer.concat([request(first), request(first), request(bodyOf(900 * 1024))]));
    await pause(800);
    socket.destroy();
    await pause(2500);
    const slow = (await client(server.url).get('/v1/models/slow')).body as { idle_seconds?: number };
    expect(slow.idle_seconds, JSON.stringify(slow)).toBeGreaterThanOrEqual(1);
    await pause(500);
    for (let i = 0; i < 3; i++) expect((await chat(900 * 1024)).status, `try ${i}`).toBe(404);
    // A compressed body holds what it inflates to.
    const inflated = bodyOf(900 * 1024);
    const compressed = gzipSync(inflated);
    const gzipped = startBody(server.url, compressed, compressed.length - 1, { 'content-encoding': 'gzip' });
    await pause(300);
    const beside = await chat(200 * 1024);
    expect([beside.status, beside.body.error?.code]).toEqual([503, 'server_busy']);
    gzipped.req.destroy();
    await gzipped.answer.catch(() => undefined);
    await pause(300);
    expect((await chat(900 * 1024)).status).toBe(404);
  });
});
