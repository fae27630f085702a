/**
 * Embedding benchmarks (issue 5), for two models (the 2-layer test embedder and a
 * MiniLM-L6-shaped one, random weights), each launched twice in the same server:
 *  1. throughput with 32 concurrent clients, dynamic batching on against off (target >= 4x);
 *  2. latency of a lone request (concurrency 1), batching on against off: batching may
 *     cost a lone request at most its window (5 ms); a call the control plane sends
 *     `alone` opens no window at all.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { throughput } from './lib/load.js';
import { report, writeResults } from './lib/report.js';
import { client, makeHome, removeHome, repoRoot, startServer, venvPython } from './lib/server.js';

const CLIENTS = 32;
const SECONDS = 8;
const LONE = 200;
const TEXT = 'The quick brown fox jumps over the lazy dog while a model serves requests from many users.';

async function embed(url: string, model: string): Promise<void> {
  const res = await fetch(`${url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: TEXT }) });
  if (res.status !== 200) throw new Error(`embeddings failed: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/**
 * Requests/s from CLIENTS concurrent keep-alive connections for SECONDS (autocannon, as
 * in the gateway benchmark): a load generator cheap enough that, on two cores, the
 * figure is the service's and not fetch()'s own cost per request.
 */
async function throughputOf(url: string, model: string): Promise<number> {
  const run = await throughput(`${url}/v1/embeddings`, { model, input: TEXT }, CLIENTS, SECONDS);
  if (run.errors > 0) throw new Error(`embeddings under load failed: ${run.errorDetail}`);
  return run.requestsPerSecond;
}

async function medianLatency(url: string, model: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < LONE; i++) {
    const started = performance.now();
    await embed(url, model);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

interface BenchModel {
  /** Suffix of the figures' names. */
  key: string;
  /** Builder script and its arguments (the output folder is appended). */
  build: string[];
}

// The 2-layer test embedder does almost no compute, so what batching saves is the fixed
// cost of each pass and call; the MiniLM-L6-shaped one is compute-bound on a CPU, so
// there batching can save no more than the engine itself gains from a batch, measured
// in-process as its ceiling.
const MODELS: BenchModel[] = [
  { key: 'tiny', build: [path.join(repoRoot, 'test', 'fixtures', 'tiny_models.py'), 'embedder'] },
  { key: 'minilm', build: [path.join(repoRoot, 'bench', 'fixtures', 'bench_embedder.py'), 'build'] },
];

async function benchModel(serverUrl: string, work: string, spec: BenchModel): Promise<void> {
  const out = execFileSync(venvPython, [...spec.build, path.join(work, spec.key)], { encoding: 'utf8' });
  const model = JSON.parse(out.trim().split('\n').pop()!) as { path: string; dimensions: number; max_tokens: number };
  const api = client(serverUrl);
  const name = `bench-embed-${spec.key}`;
  const registration = { model_name: name, dimensions: model.dimensions, max_tokens: model.max_tokens, language: ['en'], model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: model.path }] };
  await api.post('/v1/model_registrations/embedding', { model: registration, persist: false });
  const uids = { batched: `${spec.key}-batched`, unbatched: `${spec.key}-unbatched` };
  for (const [uid, batching] of [[uids.batched, true], [uids.unbatched, false]] as const) {
    const res = await api.post('/v1/models', { model_name: name, model_type: 'embedding', model_uid: uid, batching });
    if (res.status !== 200) throw new Error(`launch failed: ${res.text}`);
  }
  for (const uid of Object.values(uids)) for (let i = 0; i < 50; i++) await embed(serverUrl, uid); // warm up

  const off = await throughputOf(serverUrl, uids.unbatched);
  const on = await throughputOf(serverUrl, uids.batched);
  report(`embeddings_32_clients_req_per_s_${spec.key}`, on, off, 'req/s', { target: '>= 4' });
  const loneOff = await medianLatency(serverUrl, uids.unbatched);
  const loneOn = await medianLatency(serverUrl, uids.batched);
  report(`embeddings_lone_request_p50_ms_${spec.key}`, loneOn, loneOff, 'ms', { lowerIsBetter: true, target: `on - off <= 5 ms (is ${(loneOn - loneOff).toFixed(2)} ms)` });
  for (const uid of Object.values(uids)) await api.delete(`/v1/models/${uid}`);
  if (spec.key === 'minilm') {
    const ceiling = JSON.parse(execFileSync(venvPython, [path.join(repoRoot, 'bench', 'fixtures', 'bench_embedder.py'), 'ceiling', model.path, TEXT], { encoding: 'utf8' }).trim().split('\n').pop()!) as { single: number; batch32: number };
    report(`embeddings_in_process_batch32_vs_single_${spec.key}`, ceiling.batch32, ceiling.single, 'inputs/s', { target: 'the most batching can give this model here' });
  }
}

async function main(): Promise<void> {
  const work = await makeHome('hangar-bench-');
  const server = await startServer();
  try {
    for (const spec of MODELS) await benchModel(server.url, work, spec);
  } finally {
    await server.stop();
    await removeHome(server.home);
    await removeHome(work);
  }
  await writeResults('embeddings-batching');
}

await main();
