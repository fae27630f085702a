/**
 * Token relay at GPU scale (issue 17): the simulator engine (a GPU-shaped token
 * source) streams through the real HTTP API to many concurrent SSE clients, and the
 * CPU that the control plane and the runtime spend per relayed token is read from
 * /proc. Baselines in the same run:
 *  - the same load with HANGAR_TOKEN_RELAY=per-token (one runtime message, one SSE
 *    event and one awaited write per token: the relay before protocol v2);
 *  - the physical floor: a bare node:http server writing the same SSE frames from an
 *    in-memory generator at the same cadence (bench/lib/sse-floor-server.ts).
 * Clients are separate processes reading with raw node:http.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from './lib/cpu-time.js';
import { report, writeResults } from './lib/report.js';
import { client, makeHome, removeHome, startServer, type TestServer } from './lib/server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const STREAMS = 256;
const STEP_MS = 20; // 50 tokens/s per stream: 12,800 tokens/s offered at 256 streams
const SECONDS = 8;
const TOKENS = (SECONDS * 1000) / STEP_MS;
const CEILING_STREAMS = 1024;
const CEILING_TOKENS = 150;
const CLIENT_PROCESSES = 2;

interface ClientReport {
  tokens: number;
  failed: number;
  firstFailure: string | null;
  meanStreamRate: number;
  gapsMs: { p50: number; p90: number; p99: number; max: number; count: number };
}

interface Run {
  tokens: number;
  /** Tokens over the wall time from the first client's start to the last one's end. */
  tokensPerWallSecond: number;
  deliveredPerStream: number;
  gapsMs: ClientReport['gapsMs'];
  cpuSeconds: Record<string, number>;
}

function runClient(url: string, streams: number, body: unknown): Promise<ClientReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'lib', 'relay-client.ts'), url, String(streams), JSON.stringify(body)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as ClientReport) : reject(new Error(`relay client exited with ${code}`))));
  });
}

/** Drives `streams` streams from CLIENT_PROCESSES processes; CPU of `pids` read before and after. */
async function drive(url: string, streams: number, body: unknown, pids: Record<string, number>): Promise<Run> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
  const per = Math.ceil(streams / CLIENT_PROCESSES);
  const started = performance.now();
  const reports = await Promise.all(Array.from({ length: CLIENT_PROCESSES }, (_, i) => runClient(url, Math.min(per, streams - i * per), body)));
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid) - before[k]!]));
  const wallSeconds = (performance.now() - started) / 1000;
  const failed = reports.reduce((n, r) => n + r.failed, 0);
  if (failed > 0) throw new Error(`${failed} streams failed: ${reports.find((r) => r.firstFailure)?.firstFailure}`);
  // The gap percentiles of the process that saw more gaps (they are alike).
  const gapsMs = reports.reduce((a, b) => (b.gapsMs.count > a.gapsMs.count ? b : a)).gapsMs;
  const tokens = reports.reduce((n, r) => n + r.tokens, 0);
  return { tokens, tokensPerWallSecond: tokens / wallSeconds, deliveredPerStream: reports.reduce((n, r) => n + r.meanStreamRate, 0) / reports.length, gapsMs, cpuSeconds: cpu };
}

async function hangarRun(env: Record<string, string>, streams: number, stepMs: number, tokens: number): Promise<Run> {
  const server: TestServer = await startServer({ env });
  try {
    const api = client(server.url);
    const launched = await api.post('/v1/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'relay', step_ms: stepMs, max_batch: streams });
    if (launched.status !== 200) throw new Error(`launch failed: ${launched.text}`);
    const runtimePid = (await api.get('/v1/models/relay/replicas')).body[0].pid as number;
    const body = { model: 'relay', messages: [{ role: 'user', content: 'relay' }], max_tokens: tokens, stream: true, stream_options: { include_usage: true } };
    // A short warm-up (JIT, first connections), then the measured run.
    await drive(`${server.url}/v1/chat/completions`, 16, { ...body, max_tokens: 20 }, {});
    return await drive(`${server.url}/v1/chat/completions`, streams, body, { controlPlane: server.process.pid!, runtime: runtimePid });
  } finally {
    await server.stop();
    await removeHome(server.home);
  }
}

async function floorRun(streams: number, stepMs: number, tokens: number): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'lib', 'sse-floor-server.ts'), String(stepMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', (line) => resolve(line.split(' ')[1]!)));
    const url = `http://127.0.0.1:${port}/`;
    await drive(url, 16, { max_tokens: 20 }, {});
    return await drive(url, streams, { max_tokens: tokens }, { floor: child.pid! });
  } finally {
    child.kill();
  }
}

const us = (seconds: number, tokens: number): number => (seconds / tokens) * 1e6;

async function main(): Promise<void> {
  const home = await makeHome('hangar-bench-relay-');
  try {
    console.log(`${STREAMS} streams x ${1000 / STEP_MS} tokens/s offered (${(STREAMS * 1000) / STEP_MS} tokens/s), ${TOKENS} tokens each`);
    const batched = await hangarRun({}, STREAMS, STEP_MS, TOKENS);
    const perToken = await hangarRun({ HANGAR_TOKEN_RELAY: 'per-token' }, STREAMS, STEP_MS, TOKENS);
    const floor = await floorRun(STREAMS, STEP_MS, TOKENS);

    const cp = us(batched.cpuSeconds.controlPlane!, batched.tokens);
    report('relay_cp_cpu_us_per_token (256 streams) vs the bare node:http floor', cp, us(floor.cpuSeconds.floor!, floor.tokens), 'us', {
      lowerIsBetter: true,
      target: '<= 15 us and within 2x of the floor',
    });
    report('relay_cp_cpu_us_per_token (256 streams) vs the per-token relay', cp, us(perToken.cpuSeconds.controlPlane!, perToken.tokens), 'us', { lowerIsBetter: true });
    report('relay_runtime_cpu_us_per_token (256 streams, whole runtime process) vs the per-token relay', us(batched.cpuSeconds.runtime!, batched.tokens), us(perToken.cpuSeconds.runtime!, perToken.tokens), 'us', {
      lowerIsBetter: true,
      target: '<= 10 us',
    });
    const offered = 1000 / STEP_MS;
    report('relay_delivered_tokens_per_s (256 streams) vs offered', batched.deliveredPerStream * STREAMS, offered * STREAMS, 'tok/s', { target: '>= 0.99 of offered' });
    report('relay_delivered_tokens_per_s (256 streams, per-token relay) vs offered', perToken.deliveredPerStream * STREAMS, offered * STREAMS, 'tok/s');
    report('relay_gap_p99_ms (client-side gap between reads) vs the simulator step', batched.gapsMs.p99, STEP_MS, 'ms', {
      lowerIsBetter: true,
      target: `added <= 5 ms (added ${(batched.gapsMs.p99 - STEP_MS).toFixed(2)} ms; p50 ${batched.gapsMs.p50.toFixed(2)} ms)`,
    });
    report('relay_gap_p99_ms (per-token relay) vs the simulator step', perToken.gapsMs.p99, STEP_MS, 'ms', { lowerIsBetter: true });
    report('relay_gap_p99_ms (bare node:http floor) vs the simulator step', floor.gapsMs.p99, STEP_MS, 'ms', { lowerIsBetter: true });

    console.log(`ceiling: ${CEILING_STREAMS} streams, simulator as fast as it goes, ${CEILING_TOKENS} tokens each`);
    const ceiling = await hangarRun({}, CEILING_STREAMS, 0, CEILING_TOKENS);
    const ceilingFloor = await floorRun(CEILING_STREAMS, 1, CEILING_TOKENS);
    report('relay_ceiling_tokens_per_cp_cpu_second (1024 streams) vs the bare node:http floor', ceiling.tokens / ceiling.cpuSeconds.controlPlane!, ceilingFloor.tokens / ceilingFloor.cpuSeconds.floor!, 'tok/cpu-s', {
      target: '>= 60,000',
    });
    console.log(`ceiling: runtime ${us(ceiling.cpuSeconds.runtime!, ceiling.tokens).toFixed(1)} us/token (whole process), ${ceiling.tokensPerWallSecond.toFixed(0)} tokens/s over the wall time (client processes starting included)`);
    await writeResults('llm-relay');
  } finally {
    await removeHome(home);
  }
}

await main();
