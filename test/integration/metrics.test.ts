import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { writePythonLauncher } from './harness/fixtures.js';
import { request } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyLlm, tinyLlmRegistration } from './harness/tiny-models.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
const USER2_KEY = 'sk-72tkvudyGLPMi'; // models:list only
const USER3_KEY = 'sk-m6jEzEwmCc4iQ'; // models:list, models:read, models:start

/** The value of one sample of the Prometheus text format, or null when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const wanted = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (wanted) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

// Real traffic through a real server with auth on (a python-launcher model and a tiny
// real Llama), then the counters in /metrics must have moved.
describe('Prometheus /metrics', () => {
  let server: TestServer;
  let work: string;
  const as = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});
  const post = (p: string, body: unknown, key = ADMIN_KEY) => request(server.url, 'POST', p, body, as(key));
  const scrape = async (): Promise<string> => {
    const res = await request(server.url, 'GET', '/metrics', undefined, as(ADMIN_KEY));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text;
  };

  beforeAll(async () => {
    work = await makeHome('hangar-metrics-');
    const configFile = path.join(work, 'auth.json');
    await writeFile(configFile, JSON.stringify(upstreamAuthConfig()));
    const tiny = tinyLlm();
    server = await startServer({ args: ['--auth-config', configFile] });
    const launcher = await writePythonLauncher(work);
    expect((await post('/v1/model_registrations/flexible', { model: { model_name: 'scaler', model_uri: launcher, launcher: 'python' }, persist: false })).status).toBe(200);
    expect((await post('/v1/model_registrations/LLM', tinyLlmRegistration('tiny-chat', tiny.path))).status).toBe(200);
    const launches = await Promise.all([
      post('/v1/models', { model_name: 'scaler', model_type: 'flexible', model_uid: 'scaler' }),
      post('/v1/models', { model_name: 'tiny-chat', model_engine: 'Transformers', model_uid: 'tiny' }),
    ]);
    for (const l of launches) expect(l.status, l.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('is guarded by admin when auth is on', async () => {
    expect((await request(server.url, 'GET', '/metrics')).status).toBe(401);
    expect((await request(server.url, 'GET', '/metrics', undefined, as(USER2_KEY))).status).toBe(403);
    expect((await request(server.url, 'GET', '/metrics', undefined, as(USER3_KEY))).status).toBe(403);
  });

  it('counts requests, latency, overhead, tokens, time to first token, launches and runtime stats', async () => {
    const before = await scrape();
    const route = { route: '/v1/flexible/infers', model: 'scaler' };
    const okBefore = sample(before, 'hangar_http_requests_total', { ...route, status: '200' }) ?? 0;
    const tokensBefore = sample(before, 'hangar_generated_tokens_total', { model: 'tiny' }) ?? 0;

    for (let i = 0; i < 5; i++) {
      const res = await post('/v1/flexible/infers', { model: 'scaler', args: [[i]] }, USER3_KEY);
      expect(res.status, res.text).toBe(200);
    }
    // A 404 for a model that does not exist is counted without a model label.
    expect((await post('/v1/flexible/infers', { model: 'nope', args: [[1]] }, USER3_KEY)).status).toBe(404);
    // fastify's own refusals before routing (a path that does not decode) are counted too.
    const badUrl = { route: 'unknown', status: '400' };
    const badUrlBefore = sample(before, 'hangar_http_requests_total', badUrl) ?? 0;
    expect((await request(server.url, 'GET', '/v1/models/x%ED%A0%80y', undefined, as(USER3_KEY))).status).toBe(400);
    const chat = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 6, temperature: 0 }, USER3_KEY);
    expect(chat.status, chat.text).toBe(200);
    const stream = await post('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 6, temperature: 0, stream: true }, USER3_KEY);
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('data: [DONE]');
    // Runtime stats ride on heartbeats (every second): wait for one after the traffic.
    await new Promise((r) => setTimeout(r, 1500));

    const after = await scrape();
    expect(sample(after, 'hangar_http_requests_total', { ...route, status: '200' })).toBe(okBefore + 5);
    expect(sample(after, 'hangar_http_requests_total', badUrl)).toBe(badUrlBefore + 1);
    expect(sample(after, 'hangar_http_requests_total', { route: '/v1/flexible/infers', status: '404', model: '' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'hangar_http_request_duration_seconds_count', { route: '/v1/flexible/infers', model: 'scaler' })).toBeGreaterThanOrEqual(5);
    expect(sample(after, 'hangar_http_overhead_seconds_count', { route: '/v1/flexible/infers' })).toBeGreaterThanOrEqual(5);
    expect(sample(after, 'hangar_http_overhead_seconds_count', { route: '/v1/chat/completions' })).toBeGreaterThanOrEqual(2);

    const usage = chat.body.usage.completion_tokens as number;
    expect(usage).toBeGreaterThan(0);
    // The non-stream call's tokens plus the stream's (its last chunk carries usage).
    expect(sample(after, 'hangar_generated_tokens_total', { model: 'tiny' })).toBeGreaterThanOrEqual(tokensBefore + usage + 1);
    expect(sample(after, 'hangar_time_to_first_token_seconds_count', { model: 'tiny' })).toBeGreaterThanOrEqual(1);

    expect(sample(after, 'hangar_model_launches_total', { model_name: 'scaler', outcome: 'ready' })).toBe(1);
    expect(sample(after, 'hangar_model_launches_total', { model_name: 'tiny-chat', outcome: 'ready' })).toBe(1);
    expect(sample(after, 'hangar_model_launch_duration_seconds_count', { model_type: 'LLM', outcome: 'ready' })).toBe(1);

    // Reported by the runtimes themselves: memory, queue, batch steps of the LLM's scheduler.
    expect(sample(after, 'hangar_runtime_resident_memory_bytes', { model: 'tiny', replica: 'tiny-0' })).toBeGreaterThan(50 * 1024 * 1024);
    expect(sample(after, 'hangar_runtime_resident_memory_bytes', { model: 'scaler', replica: 'scaler-0' })).toBeGreaterThan(10 * 1024 * 1024);
    expect(sample(after, 'hangar_model_queue_depth', { model: 'scaler' })).toBe(0);
    expect(sample(after, 'hangar_model_requests_in_flight', { model: 'scaler' })).toBe(0);
    expect(sample(after, 'hangar_model_batch_steps_total', { model: 'tiny' })).toBeGreaterThanOrEqual(6);
    expect(sample(after, 'hangar_model_batched_calls_total', { model: 'tiny' })).toBeGreaterThanOrEqual(6);
    expect(sample(after, 'hangar_process_resident_memory_bytes')).toBeGreaterThan(0);
    // Idle, its batch is 0, as vLLM's running count is (it showed the last step's size for good).
    expect(await waitFor(async () => sample(await scrape(), 'hangar_model_batch_size', { model: 'tiny' }) === 0, 10_000)).toBe(true);
  });

  it('counts a request whose client leaves before its answer ends as 499, once', async () => {
    const route = { route: '/v1/chat/completions', model: 'tiny' };
    const before = await scrape();
    const left = sample(before, 'hangar_http_requests_total', { ...route, status: '499' }) ?? 0;
    const ok = sample(before, 'hangar_http_requests_total', { ...route, status: '200' }) ?? 0;
    const controller = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...as(USER3_KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 200, ignore_eos: true, stream: true }),
      signal: controller.signal,
    });
    // Read until a few events have come (the first may carry only the role).
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(/^data: /gm) ?? []).length < 4) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(await waitFor(async () => sample(await scrape(), 'hangar_http_requests_total', { ...route, status: '499' }) === left + 1, 10_000)).toBe(true);
    const after = await scrape();
    expect(sample(after, 'hangar_http_requests_total', { ...route, status: '200' }) ?? 0).toBe(ok);
    // The tokens it relayed count though no usage came (before, only a stream's final usage counted).
    expect(sample(after, 'hangar_generated_tokens_total', { model: 'tiny' })).toBeGreaterThanOrEqual((sample(before, 'hangar_generated_tokens_total', { model: 'tiny' }) ?? 0) + 2);
  });

  it('counts a failed launch and a restart', async () => {
    const broken = path.join(work, 'broken_launcher.py');
    await writeFile(broken, 'def load():\n    raise RuntimeError("this model does not load")\n\ndef infer(model, *args):\n    return None\n');
    const bad = await post('/v1/model_registrations/flexible', { model: { model_name: 'broken', model_uri: broken, launcher: 'python' }, persist: false });
    expect(bad.status, bad.text).toBe(200);
    expect((await post('/v1/models', { model_name: 'broken', model_type: 'flexible', model_uid: 'broken' })).status).toBeGreaterThanOrEqual(400);

    const replicas = await request(server.url, 'GET', '/v1/models/scaler/replicas', undefined, as(ADMIN_KEY));
    const pid = replicas.body[0].pid as number;
    process.kill(pid, 'SIGKILL');
    const restarted = async (): Promise<boolean> => (sample(await scrape(), 'hangar_replica_restarts_total', { model: 'scaler' }) ?? 0) >= 1;
    expect(await waitFor(restarted, 15_000)).toBe(true);

    const text = await scrape();
    expect(sample(text, 'hangar_model_launches_total', { model_name: 'broken', outcome: 'failed' })).toBe(1);
  });
  it('drops a terminated model\'s series, and names no gauge with a counter\'s _total', async () => {
    expect((await post('/v1/completions', { model: 'tiny', prompt: 'Once', max_tokens: 2 })).status).toBe(200);
    const streamed = await post('/v1/completions', { model: 'tiny', prompt: 'Once', max_tokens: 2, stream: true });
    expect(streamed.status).toBe(200);
    const before = await scrape();
    const seriesOf = (text: string): string[] => text.split('\n').filter((l) => !l.startsWith('#') && l.includes('model="tiny"'));
    expect(seriesOf(before).length).toBeGreaterThan(10);
    expect((await request(server.url, 'DELETE', '/v1/models/tiny', undefined, as(ADMIN_KEY))).status).toBe(200);
    expect(await waitFor(async () => seriesOf(await scrape()).length === 0, 5000)).toBe(true);
    // Other models keep theirs.
    expect((await scrape()).includes('model="scaler"')).toBe(true);

    const types = [...(await scrape()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
    expect(types.filter((t) => t.type !== 'counter' && t.name.endsWith('_total'))).toEqual([]);
    expect(types.filter((t) => t.type === 'counter' && !t.name.endsWith('_total'))).toEqual([]);
    expect(types.some((t) => t.name === 'hangar_nodejs_active_handles')).toBe(true);
  });
});
