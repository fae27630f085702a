import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESS_THRESHOLD_BYTES } from '../../src/api/compression.js';
import { buildTestApp } from './test-app.js';

/** Answer compression (docs/decisions.md, "Compression") on the real app. Streams: test/integration/responses-api.test.ts. */
describe('compression', () => {
  let built: Awaited<ReturnType<typeof buildTestApp>>;
  beforeAll(async () => {
    built = await buildTestApp(null);
  });
  afterAll(async () => {
    await built.close();
  });
  const get = (url: string, encoding?: string) => built.app.inject({ method: 'GET', url, headers: encoding ? { 'accept-encoding': encoding } : {} });

  it('gzips or brotlis a JSON answer when the client asks, and sends it plain when not', async () => {
    const plain = await get('/openapi.json');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const document = JSON.parse(plain.body);
    const gzipped = await get('/openapi.json', 'gzip');
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toContain('accept-encoding');
    expect(gzipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 5);
    expect(JSON.parse(gunzipSync(gzipped.rawPayload).toString())).toEqual(document);
    const brotli = await get('/openapi.json', 'br;q=1, gzip;q=0.5');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(brotli.rawPayload).toString())).toEqual(document);
    expect((await get('/openapi.json', 'identity')).headers['content-encoding']).toBeUndefined();
  });

  it('compresses Prometheus text, but leaves small answers and errors under the threshold alone', async () => {
    const metrics = await get('/metrics', 'gzip');
    expect(metrics.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(metrics.rawPayload).toString()).toContain('# TYPE');
    const small = await get('/v1/models', 'gzip');
    expect(small.rawPayload.length).toBeLessThan(COMPRESS_THRESHOLD_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.body)).toEqual({ object: 'list', data: [] });
    const missing = await get('/v1/models/nope', 'gzip');
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body).error.code).toBe('model_not_found');
  });
});
