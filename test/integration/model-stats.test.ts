import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamAuthConfig } from '../fixtures/auth-users.js';
import { request } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { jsonEvents, readSse } from './harness/sse-client.js';

const ADMIN_KEY = 'sk-3sjLbdwqAhhAF';
const LIST_ONLY_KEY = 'sk-72tkvudyGLPMi'; // user2: models:list
const WATCHER_KEY = 'sk-wAtChErKey012'; // monitor:view only

interface SeriesAnswer {
  model_uid: string;
  model_name: string | null;
  interval_s: number;
  window_s: number;
  timestamps: number[];
  series: Record<string, Array<number | null>>;
  finish_reasons: Record<string, Array<number | null>>;
  replicas: Array<{ replica: string; timestamps: number[]; series: Record<string, Array<number | null>> }>;
}

const sum = (values: Array<number | null>): number => values.reduce<number>((a, v) => a + (v ?? 0), 0);

// The series of issue 41, item 1, through a real server and the simulator engine (a
// product feature for load tests): what the clients were answered must add up to
// what the series say, sample by sample.
describe('model series: GET /v1/stats/models/{uid}/series and /v1/stats/overview', () => {
  let server: TestServer;
  let work: string;
  const as = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
  const get = (p: string, key = ADMIN_KEY) => request(server.url, 'GET', p, undefined, as(key));
  const post = (p: string, body: unknown, key = ADMIN_KEY) => request(server.url, 'POST', p, body, as(key));

  beforeAll(async () => {
    work = await makeHome('hangar-stats-');
    const config = upstreamAuthConfig();
    config.user_config.push({ username: 'watcher', password: 'pass4', permissions: ['monitor:view'], api_keys: [WATCHER_KEY] });
    const configFile = path.join(work, 'auth.json');
    await writeFile(configFile, JSON.stringify(config));
    server = await startServer({ args: ['--auth-config', configFile], env: { HANGAR_STATS_INTERVAL_S: '1' } });
    const launch = await post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim', replica: 2, step_ms: 4, ttft_ms: 30 });
    expect(launch.status, launch.text).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('adds up to what the clients were answered: requests, tokens, finish reasons, latencies', async () => {
    const body = (maxTokens: number) => ({ model: 'sim', messages: [{ role: 'user', content: 'count for me' }], max_tokens: maxTokens });
    // Bounded load: 8 streams in two waves of 4, and 4 plain calls.
    let completion = 0;
    let prompt = 0;
    const reasons = new Map<string, number>();
    const note = (reason: string) => reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    for (let wave = 0; wave < 2; wave++) {
      const streams = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          readSse(server.url, '/v1/chat/completions', { ...body(6 + i), stream: true, stream_options: { include_usage: true } }, { headers: as(ADMIN_KEY) }),
        ),
      );
      for (const s of streams) {
        expect(s.status).toBe(200);
        const events = jsonEvents(s) as Array<{ choices: Array<{ finish_reason: string | null }>; usage?: { prompt_tokens: number; completion_tokens: number } | null }>;
        const usage = events.find((e) => e.usage)!.usage!;
        completion += usage.completion_tokens;
        prompt += usage.prompt_tokens;
        note(events.flatMap((e) => e.choices).find((c) => c.finish_reason)!.finish_reason!);
      }
    }
    const plain = await Promise.all(Array.from({ length: 4 }, () => post('/v1/chat/completions', body(3))));
    for (const p of plain) {
      expect(p.status, p.text).toBe(200);
      completion += p.body.usage.completion_tokens;
      prompt += p.body.usage.prompt_tokens;
      note(p.body.choices[0].finish_reason);
    }
    // Anthropic's Messages API: its stop reason counts under OpenAI's name.
    const message = await post('/v1/messages', { model: 'sim', max_tokens: 4, messages: [{ role: 'user', content: 'count' }] });
    expect(message.status, message.text).toBe(200);
    completion += message.body.usage.output_tokens;
    prompt += message.body.usage.input_tokens;
    note(message.body.stop_reason === 'max_tokens' ? 'length' : 'stop');
    // A client that leaves mid-stream: an abort, not an error. Its tokens so far are
    // counted as they were relayed; how many is the relay's business, so the exact
    // token sums below are checked before it.
    const before = await waitFor(async () => {
      const a = (await get('/v1/stats/models/sim/series?window=5m')).body as SeriesAnswer;
      return sum(a.series.requests_per_s!) * a.interval_s >= 13;
    }, 15_000);
    expect(before).toBe(true);
    const tokensBefore = sum(((await get('/v1/stats/models/sim/series?window=5m')).body as SeriesAnswer).series.generated_tokens_per_s!);
    expect(tokensBefore).toBeCloseTo(completion, 6);
    const left = await readSse(server.url, '/v1/chat/completions', { ...body(400), stream: true }, { headers: as(ADMIN_KEY), stopAfter: 3 });
    expect(left.data.length).toBe(3);
    note('abort');

    // Every request is in a closed window once a sample has been taken after the last one ended.
    let answer!: SeriesAnswer;
    const complete = await waitFor(async () => {
      answer = (await get('/v1/stats/models/sim/series?window=5m')).body as SeriesAnswer;
      // A replica's CPU needs two readings of its process: one sample after its first.
      const cpuRead = answer.replicas.length === 2 && answer.replicas.every((r) => r.series.cpu_percent!.some((v) => v !== null));
      return cpuRead && sum(answer.series.requests_per_s!) * answer.interval_s >= 14;
    }, 15_000);
    expect(complete, JSON.stringify(answer)).toBe(true);
    expect(answer.model_name).toBe('simulator');
    expect(answer.interval_s).toBe(1);
    expect(answer.window_s).toBe(300);
    const n = answer.timestamps.length;
    for (const column of Object.values(answer.series)) expect(column).toHaveLength(n);
    expect(sum(answer.series.requests_per_s!) * answer.interval_s).toBeCloseTo(14, 6);
    expect(sum(answer.series.errors_per_s!)).toBe(0);
    // The stream that was left relayed a few tokens on top.
    expect(sum(answer.series.generated_tokens_per_s!) * answer.interval_s).toBeGreaterThan(completion);
    expect(sum(answer.series.prompt_tokens_per_s!) * answer.interval_s).toBeCloseTo(prompt, 6);
    for (const [reason, count] of reasons) expect(sum(answer.finish_reasons[reason]!), reason).toBe(count);
    expect(Object.values(answer.finish_reasons).reduce((a, c) => a + sum(c), 0)).toBe(14);
    // The simulator waits 30 ms before its first token: every window with a stream shows at least that.
    const ttft = answer.series.ttft_p50_ms!.filter((v): v is number => v !== null);
    expect(ttft.length).toBeGreaterThan(0);
    for (const v of ttft) expect(v).toBeGreaterThanOrEqual(30);
    for (const [i, p95] of answer.series.ttft_p95_ms!.entries()) if (p95 !== null) expect(p95).toBeGreaterThanOrEqual(answer.series.ttft_p50_ms![i]!);
    expect(answer.series.tpot_p50_ms!.some((v) => v !== null && v >= 3)).toBe(true);
    expect(answer.series.e2e_p50_ms!.some((v) => v !== null)).toBe(true);
    // Timestamps: whole seconds, one interval apart, all within the window.
    for (let i = 1; i < n; i++) expect(answer.timestamps[i]! - answer.timestamps[i - 1]!).toBeGreaterThanOrEqual(1);
    expect(answer.timestamps[0]!).toBeGreaterThan(Date.now() / 1000 - 301);

    // Both replicas, each its own process: memory measured, CPU once two readings exist.
    expect(answer.replicas).toHaveLength(2);
    for (const r of answer.replicas) {
      expect(r.series.rss_bytes!.at(-1)).toBeGreaterThan(10 * 1024 * 1024);
      expect(r.series.cpu_percent!.some((v) => v !== null && v >= 0)).toBe(true);
      expect(r.series.gpu_memory_bytes!.every((v) => v === null)).toBe(true);
    }
  });

  it('answers a shorter window with fewer samples, and refuses a bad one by name', async () => {
    const short = (await get('/v1/stats/models/sim/series?window=3s')).body as SeriesAnswer;
    expect(short.window_s).toBe(3);
    expect(short.timestamps.length).toBeLessThanOrEqual(3);
    for (const bad of ['2h', 'five', '0', '-5m', '1.5m']) {
      const res = await get(`/v1/stats/models/sim/series?window=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.detail ?? res.body.error?.message ?? res.text).toMatch(/window/);
    }
    const missing = await get('/v1/stats/models/nope/series');
    expect(missing.status).toBe(404);
  });

  it('gives the overview: counts, today, memory, and each running model with its sparkline', async () => {
    const res = await get('/v1/stats/overview');
    expect(res.status, res.text).toBe(200);
    const o = res.body;
    expect(o.models).toBe(1);
    expect(o.replicas).toBe(2);
    // Today's counts are the usage ledger's: the same as GET /v1/admin/usage from midnight.
    const usage = (await get(`/v1/admin/usage?from=${encodeURIComponent(o.today.since)}&bucket=day`)).body as Array<{ requests: number; completion_tokens: number }>;
    expect(o.today.requests).toBe(usage.reduce((a, r) => a + r.requests, 0));
    expect(o.today.completion_tokens).toBe(usage.reduce((a, r) => a + r.completion_tokens, 0));
    expect(o.today.requests).toBeGreaterThanOrEqual(14);
    expect(o.memory.host.total_bytes).toBeGreaterThan(o.memory.host.used_bytes);
    expect(o.memory.host.models_bytes).toBeGreaterThan(0);
    expect(o.memory.gpus).toEqual([]);
    const sim = o.running.find((m: { model_uid: string }) => m.model_uid === 'sim');
    expect(sim.replicas).toBe(2);
    expect(sim.sparkline.timestamps.length).toBe(sim.sparkline.generated_tokens_per_s.length);
    expect(sim.sparkline.timestamps.length).toBeGreaterThan(0);
  });

  it('needs monitor:view: a user with only that sees the stats and may call no model', async () => {
    for (const p of ['/v1/stats/overview', '/v1/stats/models/sim/series']) {
      expect((await get(p, LIST_ONLY_KEY)).status, p).toBe(403);
      expect((await get(p, WATCHER_KEY)).status, p).toBe(200);
      expect((await request(server.url, 'GET', p)).status, p).toBe(401);
    }
    expect((await post('/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'hi' }] }, WATCHER_KEY)).status).toBe(403);
  });

  it('drops a model\'s series when it is terminated', async () => {
    const res = await request(server.url, 'DELETE', '/v1/models/sim', undefined, as(ADMIN_KEY));
    expect(res.status, res.text).toBe(200);
    expect((await get('/v1/stats/models/sim/series')).status).toBe(404);
    expect((await get('/v1/stats/overview')).body.running).toEqual([]);
  });
});
