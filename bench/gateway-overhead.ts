/**
 * Gateway overhead (issue 7, benchmark 1): a trivial flexible model that returns its
 * input, served through the full path (HTTP → control plane → ZeroMQ → Python runtime
 * → back), against
 *   - the floor: the same model called in-process in Python, and
 *   - FastAPI + uvicorn calling the same model in-process (the stack Xinference is
 *     built on, without its actor hops), same route and body.
 * Latency: one request at a time (p50, p99); throughput: fixed concurrency (autocannon).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { latencyProbe, throughput } from './lib/load.js';
import { report, writeResults } from './lib/report.js';
import { client, removeHome, repoRoot, startServer, venvPython } from './lib/server.js';

const BODY = { model: 'echo', args: [[1.5, 2.5, 3.5, 4.5]] };
const CONCURRENCY = 32;
const LOAD_SECONDS = 8;
const LATENCY = { requests: 3000, warmup: 300, maxSeconds: 30 };
const fixtures = path.join(repoRoot, 'bench', 'fixtures');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitListening(url: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${ms} ms`);
}

async function measureFastApi(): Promise<{ latency: Awaited<ReturnType<typeof latencyProbe>>; load: Awaited<ReturnType<typeof throughput>> }> {
  const port = await freePort();
  const child = spawn(venvPython, [path.join(fixtures, 'bench_gateway.py'), 'fastapi', String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    const url = `http://127.0.0.1:${port}/v1/flexible/infers`;
    await waitListening(url, 30_000);
    const latency = await latencyProbe(url, BODY, LATENCY);
    const load = await throughput(url, BODY, CONCURRENCY, LOAD_SECONDS);
    return { latency, load };
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const floor = JSON.parse(execFileSync(venvPython, [path.join(fixtures, 'bench_gateway.py'), 'floor', '20000'], { encoding: 'utf8' }).trim()) as { p50_ms: number; p99_ms: number };

  const server = await startServer();
  let hangar;
  try {
    const api = client(server.url);
    const definition = { model_name: 'echo', model_uri: path.join(fixtures, 'echo_model.py'), launcher: 'python' };
    const registered = await api.post('/v1/model_registrations/flexible', { model: definition, persist: false });
    if (registered.status !== 200) throw new Error(`registration failed: ${registered.text}`);
    const launched = await api.post('/v1/models', { model_name: 'echo', model_type: 'flexible', model_uid: 'echo' });
    if (launched.status !== 200) throw new Error(`launch failed: ${launched.text}`);
    const url = `${server.url}/v1/flexible/infers`;
    const latency = await latencyProbe(url, BODY, { ...LATENCY, header: 'x-hangar-overhead-ms' });
    const load = await throughput(url, BODY, CONCURRENCY, LOAD_SECONDS);
    if (load.errors > 0) throw new Error(`${load.errors} failed requests under load`);
    hangar = { latency, load };
  } finally {
    await server.stop();
    await removeHome(server.home);
  }
  const fastapi = await measureFastApi();

  const added = (p50: number) => p50 - floor.p50_ms;
  report('gateway_p50_added_ms: one request at a time, HTTP round trip minus the in-process call (FastAPI as baseline)', added(hangar.latency.p50), added(fastapi.latency.p50), 'ms', { lowerIsBetter: true, target: '<= 0.5 ms' });
  report('gateway_control_plane_ms: x-hangar-overhead-ms p50 (time in the control plane) vs the whole added time', hangar.latency.headerP50 ?? NaN, added(hangar.latency.p50), 'ms', { lowerIsBetter: true });
  report(`gateway_req_per_s: ${CONCURRENCY} concurrent connections vs FastAPI + uvicorn`, hangar.load.requestsPerSecond, fastapi.load.requestsPerSecond, 'req/s', { target: '>= 2x' });
  report(`gateway_p99_ms: ${CONCURRENCY} concurrent connections vs FastAPI + uvicorn`, hangar.load.p99, fastapi.load.p99, 'ms', { lowerIsBetter: true, target: '<= 0.5x the baseline (ratio >= 2)' });
  report('gateway_p99_one_at_a_time_ms vs FastAPI + uvicorn', hangar.latency.p99, fastapi.latency.p99, 'ms', { lowerIsBetter: true });
  console.log(`(floor: in-process p50 ${floor.p50_ms.toFixed(4)} ms, p99 ${floor.p99_ms.toFixed(4)} ms)`);
  await writeResults('gateway-overhead');
}

await main();
