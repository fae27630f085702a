import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePythonLauncher } from './harness/fixtures.js';
import { client } from './harness/http.js';
import { runtimePids } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

const TOTAL = 10_000;
const CONCURRENCY = 16;

/** A small seeded PRNG (mulberry32): the same run every time, so a failure can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE_STRINGS = [
  '', ' ', '../../../../etc/passwd', '..%2f..%2fetc%2fpasswd', 'file:///etc/shadow', '/dev/zero', '/proc/self/environ',
  'a/b', 'x'.repeat(101), 'x'.repeat(5000), '\u0000', '\uFFFF\uD800', '<script>alert(1)</script>', "'; DROP TABLE models; --",
  '{{7*7}}', '${process.exit()}', '__proto__', 'constructor', 'fz', 'LLM', 'embedding', 'flexible', 'qwen2.5-instruct', 'sk-72tkvudyGLPMi',
  '%00', '\r\nX-Injected: 1', '🙂'.repeat(100), 'NaN', '-1', '1e309',
];
const FIELD_NAMES = [
  'model', 'model_name', 'model_type', 'model_engine', 'model_uid', 'replica', 'n_gpu', 'gpu_idx', 'request_limits', 'model_path',
  'envs', 'args', 'messages', 'prompt', 'input', 'query', 'documents', 'max_tokens', 'temperature', 'stream', 'stop', 'tools',
  'persist', 'username', 'password', 'top_n', 'dimensions', 'encoding_format', '__proto__', 'constructor', 'launcher_args', 'seed',
];

describe('fuzz: 10,000 malformed and hostile requests', () => {
  let server: TestServer;
  let work: string;

  beforeAll(async () => {
    work = await makeHome('hangar-fuzz-');
    const launcher = await writePythonLauncher(work);
    server = await startServer();
    const api = client(server.url);
    expect((await api.post('/v1/model_registrations/flexible', { model: { model_name: 'fz-model', model_uri: launcher, launcher: 'python' }, persist: false })).status).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'fz-model', model_type: 'flexible', model_uid: 'fz' })).status).toBe(200);
  });

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('answers every one below 500, keeps serving, and gives its memory back', async () => {
    const rand = prng(20261123);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const doc = (await client(server.url).get('/openapi.json')).body;
    const routes: Array<{ method: string; path: string }> = [];
    for (const [p, methods] of Object.entries(doc.paths as Record<string, object>)) for (const m of Object.keys(methods)) routes.push({ method: m.toUpperCase(), path: p });
    routes.push({ method: 'GET', path: '/v1/{nowhere}' }, { method: 'PUT', path: '/v1/models' }, { method: 'PATCH', path: '/v1/models/{model_uid}' });

    const value = (depth: number): unknown => {
      const r = rand();
      if (depth > 3 || r < 0.3) return pick([null, true, false, 0, -1, 1.5, 2 ** 53 + 1, 1e308, pick(HOSTILE_STRINGS)]);
      if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rand() * 5) }, () => [pick(FIELD_NAMES), value(depth + 1)]));
    };
    const body = (): { payload: string | Buffer | undefined; type: string } => {
      const r = rand();
      if (r < 0.05) return { payload: undefined, type: 'application/json' };
      if (r < 0.1) return { payload: `${'['.repeat(2000)}1${']'.repeat(2000)}`, type: 'application/json' };
      if (r < 0.14) return { payload: JSON.stringify({ model: 'fz', args: ['x'.repeat(2 ** 20 + Math.floor(rand() * 2 ** 20))] }), type: 'application/json' };
      if (r < 0.18) return { payload: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), type: 'application/json' };
      if (r < 0.22) return { payload: '{"model": "fz", "args": [1, 2', type: 'application/json' };
      if (r < 0.26) return { payload: 'model=fz&args=1', type: pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) };
      if (r < 0.3) return { payload: JSON.stringify({ __proto__: { polluted: true }, constructor: { prototype: { polluted: true } }, model: 'fz' }), type: 'application/json' };
      const obj = value(0);
      if (obj && typeof obj === 'object' && !Array.isArray(obj) && rand() < 0.5) (obj as Record<string, unknown>).model = pick(['fz', 'fz', 'nope', ...HOSTILE_STRINGS]);
      return { payload: JSON.stringify(obj), type: 'application/json' };
    };
    const headers = (type: string): Record<string, string> => {
      const h: Record<string, string> = { 'content-type': type };
      const r = rand();
      if (r < 0.1) h.authorization = pick(['Bearer ', 'Basic Og==', `Bearer ${'x'.repeat(4000)}`, 'Bearer sk-72tkvudyGLPMi', 'garbage']);
      else if (r < 0.15) h['x-request-id'] = pick(['x'.repeat(1000), '../etc', 'ok-id-1']);
      else if (r < 0.2) h.accept = pick(['text/event-stream', 'application/xml', '*/*;q=0', '']);
      return h;
    };
    // A lone surrogate cannot be percent-encoded as UTF-8; send its invalid raw bytes instead.
    const encode = (s: string) => {
      try {
        return encodeURIComponent(s);
      } catch {
        return '%ED%A0%80';
      }
    };
    const fill = (p: string) => p.replace(/\{[^}]+\}/g, () => encode(pick([...HOSTILE_STRINGS, 'fz', 'LLM'])));

    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.process.pid}/status`, 'utf8'))![1]);
    // Warm up (JIT, pools, first-use allocations) before taking the baseline.
    for (let i = 0; i < 200; i++) await fetch(`${server.url}/v1/flexible/infers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"fz","args":[[1]]}' });
    const baseline = rss();

    const failures: string[] = [];
    let sent = 0;
    const worker = async () => {
      while (sent < TOTAL) {
        sent++;
        const route = pick(routes);
        const { payload, type } = route.method === 'GET' || route.method === 'DELETE' ? { payload: undefined, type: 'application/json' } : body();
        const url = `${server.url}${fill(route.path)}${rand() < 0.1 ? `?${pick(FIELD_NAMES)}=${encode(pick(HOSTILE_STRINGS))}` : ''}`;
        try {
          const res = await fetch(url, { method: route.method, headers: headers(type), ...(payload !== undefined ? { body: payload } : {}), signal: AbortSignal.timeout(30_000) });
          const text = await res.text();
          if (res.status >= 500 && !(res.status === 503 && text.includes('model_loading'))) failures.push(`${route.method} ${url} -> ${res.status} ${text.slice(0, 200)}`);
        } catch (err) {
          failures.push(`${route.method} ${url} -> ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(failures.slice(0, 10), `${failures.length} failures`).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(TOTAL);

    // Still serving, model still up, nothing crashed, nothing polluted.
    const api = client(server.url);
    expect((await api.post('/v1/flexible/infers', { model: 'fz', args: [[2]] })).body.values).toEqual([2]);
    expect(await runtimePids(server.home)).toHaveLength(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Memory: let the server settle, then compare with the warmed-up baseline.
    await new Promise((r) => setTimeout(r, 2000));
    const after = rss();
    expect(after, `RSS ${baseline} kB -> ${after} kB`).toBeLessThan(baseline * 1.5);
  }, 300_000);

  it('refuses a body over the 64 MiB limit with a clear 413', async () => {
    const huge = Buffer.alloc(65 * 2 ** 20, 0x20);
    const res = await fetch(`${server.url}/v1/flexible/infers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: huge });
    expect(res.status).toBe(413);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe('payload_too_large');
    expect((await client(server.url).get('/status')).status).toBe(200);
  });
});
