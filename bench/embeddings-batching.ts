/**
 * Embedding benchmarks (issue 5), one model launched twice in the same server:
 *  1. throughput with 32 concurrent clients, dynamic batching on against off (target >= 4x);
 *  2. latency of a lone request (concurrency 1), batching on against off: batching may
 *     cost a lone request at most its window (5 ms).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { report, writeResults } from './lib/report.js';
import { client, makeHome, removeHome, repoRoot, startServer, venvPython } from './lib/server.js';

const CLIENTS = 32;
const PER_CLIENT = 40;
const LONE = 200;
const TEXT = 'The quick brown fox jumps over the lazy dog while a model serves requests from many users.';

async function embed(url: string, model: string): Promise<void> {
  const res = await fetch(`${url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: TEXT }) });
  if (res.status !== 200) throw new Error(`embeddings failed: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

async function throughput(url: string, model: string): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (let i = 0; i < PER_CLIENT; i++) await embed(url, model);
  }));
  return (CLIENTS * PER_CLIENT) / ((performance.now() - started) / 1000);
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

async function main(): Promise<void> {
  const work = await makeHome('hangar-bench-');
  const out = execFileSync(venvPython, [path.join(repoRoot, 'test', 'fixtures', 'tiny_models.py'), 'embedder', path.join(work, 'embedder')], { encoding: 'utf8' });
  const model = JSON.parse(out.trim().split('\n').pop()!) as { path: string; dimensions: number; max_tokens: number };
  const server = await startServer();
  try {
    const api = client(server.url);
    const registration = { model_name: 'bench-embed', dimensions: model.dimensions, max_tokens: model.max_tokens, language: ['en'], model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: model.path }] };
    await api.post('/v1/model_registrations/embedding', { model: registration, persist: false });
    for (const [uid, batching] of [['batched', true], ['unbatched', false]] as const) {
      const res = await api.post('/v1/models', { model_name: 'bench-embed', model_type: 'embedding', model_uid: uid, batching });
      if (res.status !== 200) throw new Error(`launch failed: ${res.text}`);
    }
    for (const uid of ['batched', 'unbatched']) for (let i = 0; i < 50; i++) await embed(server.url, uid); // warm up

    const off = await throughput(server.url, 'unbatched');
    const on = await throughput(server.url, 'batched');
    report('embeddings_32_clients_req_per_s', on, off, 'req/s', { target: '>= 4' });
    const loneOff = await medianLatency(server.url, 'unbatched');
    const loneOn = await medianLatency(server.url, 'batched');
    report('embeddings_lone_request_p50_ms', loneOn, loneOff, 'ms', { lowerIsBetter: true, target: `on - off <= 5 ms (is ${(loneOn - loneOff).toFixed(2)} ms)` });
  } finally {
    await server.stop();
    await removeHome(server.home);
    await removeHome(work);
  }
  await writeResults('embeddings-batching');
}

await main();
