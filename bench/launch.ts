/**
 * Launch time (issue 7, benchmark 3): `POST /v1/models` until READY for a tiny real
 * Llama (Transformers engine), cold (a new runtime process) and warm (the warm spare,
 * torch already imported), against the floor: a bare Python process importing the
 * engine and loading the same model. p50 of a few launches each.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { report, writeResults } from './lib/report.js';
import { client, makeHome, removeHome, repoRoot, startServer, venvPython, type TestServer } from './lib/server.js';
import { tinyLlm, tinyLlmRegistration } from '../test/integration/harness/tiny-models.js';

const LAUNCHES = 3;
// The floor sees no GPU, like a CPU replica (the launcher sets the same), so both skip CUDA's set-up.
const env = { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', CUDA_VISIBLE_DEVICES: '' };

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function floorOnce(modelDir: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(venvPython, [path.join(repoRoot, 'bench', 'fixtures', 'bench_launch.py'), modelDir], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let loadedAt = 0;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'loaded') loadedAt = performance.now();
    });
    child.on('exit', (code) => (loadedAt > 0 ? resolve(loadedAt - started) : reject(new Error(`floor process exited with ${code}`))));
  });
}

/** Launches and terminates the model LAUNCHES times; `beforeEach` waits for whatever the launch should find. */
async function timeLaunches(server: TestServer, modelDir: string, beforeEach: (i: number) => Promise<void>): Promise<number[]> {
  const api = client(server.url);
  const reg = await api.post('/v1/model_registrations/LLM', tinyLlmRegistration('bench-tiny', modelDir));
  if (reg.status !== 200) throw new Error(`registration failed: ${reg.text}`);
  const times: number[] = [];
  for (let i = 0; i < LAUNCHES; i++) {
    await beforeEach(i);
    const started = performance.now();
    const launch = await api.post('/v1/models', { model_name: 'bench-tiny', model_engine: 'Transformers', model_uid: 'tiny' });
    if (launch.status !== 200) throw new Error(`launch failed: ${launch.text}`);
    times.push(performance.now() - started);
    await api.delete('/v1/models/tiny');
  }
  return times;
}

/** Waits until the server has logged `n` finished spare preloads (the spare's own log line). */
async function preloads(server: TestServer, n: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (server.logs.filter((l) => typeof l.msg === 'string' && l.msg.includes('preloaded ')).length < n) {
    if (Date.now() > deadline) throw new Error('the warm spare did not finish its imports within 120 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const work = await makeHome('hangar-bench-launch-');
  const model = tinyLlm();
  const floor: number[] = [];
  for (let i = 0; i < LAUNCHES; i++) floor.push(await floorOnce(model.path));

  const cold = await startServer({ env: { HANGAR_WARM_SPARE: '0' } });
  let coldTimes: number[];
  try {
    coldTimes = await timeLaunches(cold, model.path, async () => {});
  } finally {
    await cold.stop();
    await removeHome(cold.home);
  }

  const warm = await startServer({ env: { HANGAR_WARM_SPARE: '' } });
  let warmTimes: number[];
  try {
    // Each launch waits for a spare that has finished importing, as a launch on an idle service would find it.
    warmTimes = await timeLaunches(warm, model.path, (i) => preloads(warm, i + 1));
  } finally {
    await warm.stop();
    await removeHome(warm.home);
  }
  await removeHome(work);

  report('launch_warm_ms: POST /v1/models to READY with a warm spare vs a bare Python process loading the model', median(warmTimes), median(floor), 'ms', { lowerIsBetter: true, target: '<= 1000 ms' });
  report('launch_cold_ms: POST /v1/models to READY without a spare vs the same floor', median(coldTimes), median(floor), 'ms', { lowerIsBetter: true });
  report('launch_warm_vs_cold_ms: warm spare vs cold start', median(warmTimes), median(coldTimes), 'ms', { lowerIsBetter: true });
  console.log(`(launches in ms: floor ${floor.map(Math.round).join(', ')}; cold ${coldTimes.map(Math.round).join(', ')}; warm ${warmTimes.map(Math.round).join(', ')})`);
  await writeResults('launch');
}

await main();
