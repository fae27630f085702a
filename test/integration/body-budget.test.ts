import { request as httpRequest, type ClientRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { removeHome, startServer, type TestServer } from './harness/server.js';

const MiB = 1024 * 1024;

interface Started {
  req: ClientRequest;
  answer: Promise<{ status: number; headers: Record<string, unknown>; body: string }>;
}

/** A chat request that declares `declared` bytes and sends the first `sent` of them now. */
function startBody(url: string, declared: number, sent: number, headers: Record<string, string> = {}, body: Buffer = bodyOf(declared)): Started {
  const { hostname, port } = new URL(url);
  let req!: ClientRequest;
  const answer = new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    req = httpRequest({ hostname, port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', 'content-length': String(declared), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
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

  beforeAll(async () => {
    server = await startServer({ env: { HANGAR_MAX_INFLIGHT_BODY_BYTES: String(1 * MiB) } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
  });

  it('answers 503 server_busy before reading a body that would pass it, and lets requests in again once bodies are answered', async () => {
    const declared = 600 * 1024;
    // A slow upload holds its 600 KiB from its first byte.
    const slow = startBody(server.url, declared, 1024);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await client(server.url).post('/v1/chat/completions', JSON.parse(bodyOf(declared).toString()));
    expect([refused.status, refused.body.error?.code], refused.text).toEqual([503, 'server_busy']);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error.message).toMatch(/holds 600 KiB of request bodies in flight, and this one would pass its budget of 1 MiB/);
    // Small bodies still fit beside it; a request alone always gets in, whatever its size within its route's limit.
    const small = await client(server.url).post('/v1/chat/completions', { model: 'absent', messages: [{ role: 'user', content: 'hi' }] });
    expect(small.status).toBe(404);
    slow.req.end(bodyOf(declared).subarray(1024));
    expect((await slow.answer).status).toBe(404);
    const alone = await client(server.url).post('/v1/chat/completions', JSON.parse(bodyOf(2 * MiB).toString()));
    expect([alone.status, alone.body.error?.code]).toEqual([404, 'model_not_found']);
    // A client that leaves mid-upload gives its share back.
    const gone = startBody(server.url, declared, 1024);
    await new Promise((resolve) => setTimeout(resolve, 300));
    gone.req.destroy();
    await gone.answer.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await client(server.url).post('/v1/chat/completions', JSON.parse(bodyOf(declared).toString()));
    expect(after.status, after.text).toBe(404);
    // A compressed body holds what it inflates to, up to its route's limit, whatever its declared length.
    const compressed = gzipSync(bodyOf(1000));
    const gzipped = startBody(server.url, compressed.length, 10, { 'content-encoding': 'gzip' }, compressed);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const beside = await client(server.url).post('/v1/chat/completions', { model: 'absent', messages: [{ role: 'user', content: 'hi' }] });
    expect([beside.status, beside.body.error?.code]).toEqual([503, 'server_busy']);
    gzipped.req.destroy();
    await gzipped.answer.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await client(server.url).post('/v1/chat/completions', { model: 'absent', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(404);
  });
});
