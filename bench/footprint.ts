/**
 * Footprint (issue 7, benchmark 4): the control plane's resident memory idle, with 10
 * models running, and under 1,000 concurrent connections. Baselines: a bare Node
 * process and a FastAPI + uvicorn process (idle), then the idle control plane itself.
 * Runtime processes are not counted (each is its own process; /metrics reports them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { throughput } from './lib/load.js';
import { report, writeResults } from './lib/report.js';
import { client, removeHome, repoRoot, startServer, venvPython } from './lib/server.js';

const MODELS = 10;
const CONNECTIONS = 1000;
const LOAD_SECONDS = 6;
const fixtures = path.join(repoRoot, 'bench', 'fixtures');

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function idleRss(child: ChildProcess, settleMs: number): Promise<number> {
  await sleep(settleMs);
  const rss = rssMiB(child.pid!);
  child.kill('SIGTERM');
  return rss;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function main(): Promise<void> {
  const bareNode = await idleRss(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }), 1500);
  const port = await freePort();
  const fastapi = spawn(venvPython, [path.join(fixtures, 'bench_gateway.py'), 'fastapi', String(port)], { stdio: 'ignore' });
  const fastapiRss = await idleRss(fastapi, 4000);

  const server = await startServer();
  const pid = server.process.pid!;
  let idle: number;
  let withModels: number;
  let underLoad = 0;
  try {
    await sleep(2000);
    idle = rssMiB(pid);
    const api = client(server.url);
    const definition = { model_name: 'echo', model_uri: path.join(fixtures, 'echo_model.py'), launcher: 'python' };
    const registered = await api.post('/v1/model_registrations/flexible', { model: definition, persist: false });
    if (registered.status !== 200) throw new Error(`registration failed: ${registered.text}`);
    for (let i = 0; i < MODELS; i++) {
      const launched = await api.post('/v1/models', { model_name: 'echo', model_type: 'flexible', model_uid: `echo-${i}` });
      if (launched.status !== 200) throw new Error(`launch failed: ${launched.text}`);
    }
    for (let i = 0; i < MODELS; i++) await api.post('/v1/flexible/infers', { model: `echo-${i}`, args: [[i]] });
    await sleep(2000);
    withModels = rssMiB(pid);

    const sampler = setInterval(() => {
      underLoad = Math.max(underLoad, rssMiB(pid));
    }, 200);
    const load = await throughput(`${server.url}/v1/flexible/infers`, { model: 'echo-0', args: [[1, 2, 3]] }, CONNECTIONS, LOAD_SECONDS);
    clearInterval(sampler);
    console.log(`(under load: ${Math.round(load.requestsPerSecond)} req/s, p99 ${load.p99} ms, ${load.errors} failed: ${load.errorDetail})`);
  } finally {
    await server.stop();
    await removeHome(server.home);
  }

  report('footprint_idle_rss_mib: control plane idle vs FastAPI + uvicorn idle', idle, fastapiRss, 'MiB', { lowerIsBetter: true });
  report('footprint_idle_over_bare_node_mib: control plane idle vs a bare Node process', idle, bareNode, 'MiB', { lowerIsBetter: true });
  report(`footprint_${MODELS}_models_rss_mib: control plane with ${MODELS} models running vs idle`, withModels, idle, 'MiB', { lowerIsBetter: true });
  report(`footprint_${CONNECTIONS}_connections_rss_mib: peak under ${CONNECTIONS} concurrent connections vs idle`, underLoad, idle, 'MiB', { lowerIsBetter: true });
  await writeResults('footprint');
}

await main();
