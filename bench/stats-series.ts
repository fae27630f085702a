/**
 * The models' series (issue 41, docs/monitoring.md): the service runs in this process
 * with 20 simulator models (one runtime process each, the engine a product feature for
 * load tests), and two figures are taken.
 *
 * 1. The sampler's cost with 20 models running: the control plane's CPU (utime +
 *    stime from /proc) over turns with the 5 s sampler on and turns with it off, in
 *    alternating pairs (this VM drifts), the difference per second as a share of one
 *    core; beside it the CPU the sampler's own ticks measured with getrusage. Target < 1%.
 * 2. The series route with an hour of data from all 20 models: each model's rings are
 *    filled with 720 samples (the real sampler, one tick per past 5 s, with request
 *    outcomes recorded through the real path between ticks), then `GET
 *    /v1/stats/models/{uid}/series?window=1h` and `GET /v1/stats/overview` are timed
 *    over loopback HTTP beside `GET /v1/models/{uid}` (a small answer) as the baseline.
 *    Target: the series answer within 5 ms.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { resolveConfig } from '../src/config/config.js';
import { startService } from '../src/service.js';
import type { ModelStats } from '../src/api/stats/model-stats.js';
import { cpuSeconds } from './lib/cpu-time.js';
import { report, writeResults } from './lib/report.js';
import { makeHome, removeHome } from './lib/server.js';

const MODELS = 20;
const PAIRS = 3;
const TURN_S = 20;
const REQUESTS = 300;

process.env.HF_HUB_OFFLINE = '1';
process.env.HANGAR_WARM_SPARE = '0';

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/**
 * `n` GETs in a row from another process (the service runs in this one: a client on
 * the same event loop would add its own work to every figure), over one kept-alive
 * connection, asking for compression as a browser does; each time is from the request
 * to the answer's last byte (not decompressed: that is the client's work).
 */
async function timeGets(url: string | string[], n: number): Promise<number[]> {
  const urls = Array.isArray(url) ? url : Array.from({ length: n }, () => url);
  const client = `
    const http = require('node:http');
    const urls = JSON.parse(process.argv[1]);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const times = [];
    const one = (url) => new Promise((resolve, reject) => {
      const start = performance.now();
      http.get(url, { agent, headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(url + ': ' + res.statusCode));
        res.on('data', () => {});
        res.on('end', () => resolve(performance.now() - start));
      }).on('error', reject);
    });
    (async () => { for (const url of urls) times.push(await one(url)); console.log(JSON.stringify(times)); agent.destroy(); })()
      .catch((e) => { console.error(e); process.exit(1); });`;
  const { stdout } = await execFileAsync(process.execPath, ['-e', client, JSON.stringify(urls)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as number[];
}

async function samplerCost(stats: ModelStats): Promise<void> {
  const share = { on: [] as number[], off: [] as number[] };
  const turn = async (on: boolean) => {
    if (on) stats.start();
    else stats.stop();
    await sleep(500);
    const t0 = performance.now();
    const c0 = cpuSeconds(process.pid);
    await sleep(TURN_S * 1000);
    (on ? share.on : share.off).push((cpuSeconds(process.pid) - c0) / ((performance.now() - t0) / 1000));
  };
  const tickCpuBefore = stats.samplerCpuMicros;
  const ticksBefore = stats.samplerTicks;
  for (let i = 0; i < PAIRS; i++) {
    for (const on of i % 2 === 0 ? [true, false] : [false, true]) await turn(on);
  }
  const ticks = stats.samplerTicks - ticksBefore;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const samplerShare = Math.max(0, mean(share.on) - mean(share.off)) * 100;
  report(`stats_sampler_core_percent: control plane CPU with the ${stats.settings.intervalMs / 1000} s sampler on minus off, ${MODELS} models, ${PAIRS} pairs of ${TURN_S} s turns (/proc)`, samplerShare, 1, '% of a core', { lowerIsBetter: true, target: '< 1' });
  report('stats_sampler_idle_core_percent: the whole control plane, sampler off (the baseline the difference is taken from)', mean(share.off) * 100, mean(share.on) * 100, '% of a core', { lowerIsBetter: true });
  const perTick = (stats.samplerCpuMicros - tickCpuBefore) / Math.max(1, ticks);
  report(`stats_sampler_tick_us: CPU of one sample of ${MODELS} models (getrusage around the tick)`, perTick, stats.settings.intervalMs * 10, 'us', { lowerIsBetter: true });

}

async function main(): Promise<void> {
  const home = await makeHome('hangar-bench-stats-');
  const service = await startService(resolveConfig({ home, host: '127.0.0.1', port: 0, restore: false }), pino({ level: 'silent' }));
  const stats = service.app.modelStats;
  try {
    const uids = Array.from({ length: MODELS }, (_, i) => `sim-${String(i).padStart(2, '0')}`);
    for (const uid of uids) {
      const res = await fetch(`${service.url}/v1/models`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: uid }),
      });
      if (!res.ok) throw new Error(`launch ${uid}: ${res.status} ${await res.text()}`);
    }
    console.log(`${MODELS} simulator models running`);

    // 1. The sampler's cost: alternating turns, on then off, off then on.
    if (!process.argv.includes('--only-series')) await samplerCost(stats);
    stats.stop();

    // 2. An hour of data: 720 real ticks, stamped 5 s apart over the past hour.
    const interval = stats.settings.intervalMs;
    const start = Date.now() - stats.capacity * interval;
    for (let k = 0; k < stats.capacity; k++) {
      for (const [i, uid] of uids.entries()) {
        for (let r = 0; r < 4; r++) {
          stats.generated(uid, 40 + i);
          stats.answered(uid, { ok: true, promptTokens: 20 + r, uncountedTokens: 0, e2eMs: 200 + 37 * Math.random(), ttftMs: 15 + 5 * Math.random(), tpotMs: 4 + Math.random(), finishReason: r === 3 ? 'length' : 'stop' });
        }
      }
      stats.sample(start + (k + 1) * interval);
    }
    const one = await (await fetch(`${service.url}/v1/stats/models/sim-07/series?window=1h`)).json() as { timestamps: number[] };
    const bytes = (await (await fetch(`${service.url}/v1/stats/models/sim-07/series?window=1h`)).arrayBuffer()).byteLength;
    console.log(`series answer: ${one.timestamps.length} samples, ${bytes} bytes`);
    if (one.timestamps.length < stats.capacity - 1) throw new Error(`expected an hour of samples, got ${one.timestamps.length}`);
    await timeGets(`${service.url}/v1/stats/models/sim-07/series?window=1h`, 30); // warm-up (JIT)
    const base = await timeGets(`${service.url}/v1/models/sim-07`, REQUESTS);
    const series = await timeGets(`${service.url}/v1/stats/models/sim-07/series?window=1h`, REQUESTS);
    // Cold: each request a window not asked for since the last sample (3600 s, 3599 s,
    // ...: the same hour of samples, give or take one), so every answer is built from
    // the rings and serialized, never taken from the per-sample cache.
    const cold = await timeGets(Array.from({ length: REQUESTS }, (_, i) => `${service.url}/v1/stats/models/${uids[i % MODELS]}/series?window=${3600 - i}`), REQUESTS);
    const overview = await timeGets(`${service.url}/v1/stats/overview`, REQUESTS);
    report(`stats_series_1h_p50_ms: GET series?window=1h (${stats.capacity} samples, ${MODELS} models kept), loopback HTTP from another process, ${REQUESTS} in a row; baseline GET /v1/models/{uid}`, quantile(series, 0.5), quantile(base, 0.5), 'ms', { lowerIsBetter: true, target: '< 5' });
    report('stats_series_1h_p99_ms', quantile(series, 0.99), quantile(base, 0.99), 'ms', { lowerIsBetter: true, target: '< 5' });
    report(`stats_series_1h_cold_p50_ms: the same, every answer built anew (a window not asked for before, across the 20 models)`, quantile(cold, 0.5), quantile(base, 0.5), 'ms', { lowerIsBetter: true, target: '< 5' });
    report('stats_series_1h_cold_p99_ms', quantile(cold, 0.99), quantile(base, 0.99), 'ms', { lowerIsBetter: true, target: '< 5' });
    report('stats_overview_p50_ms: GET /v1/stats/overview (20 models, 5-minute sparklines)', quantile(overview, 0.5), quantile(base, 0.5), 'ms', { lowerIsBetter: true });
    await writeResults('stats-series');
  } finally {
    await service.close();
    await removeHome(home);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
