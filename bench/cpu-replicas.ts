/**
 * CPU threads of replicas side by side (docs/performance.md, "CPU threads"): one
 * transformers model launched with as many replicas as the machine has cores, one
 * stream per replica at once, total tokens/s. Baseline, in the same run: the same
 * launch with HANGAR_RUNTIME_CPU_THREADS=0, where every replica's torch sizes its
 * pool to every core (the libraries' default) and the pools' spinning workers wait
 * for each other.
 */
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { report, writeResults } from './lib/report.js';
import { readSse } from './lib/sse.js';
import { client, makeHome, removeHome, repoRoot, startServer, venvPython } from './lib/server.js';

const REPLICAS = Math.max(2, os.availableParallelism());
const MAX_TOKENS = 128;
const ROUNDS = 3;
const PROMPT = 'Once upon a time there was a little robot who liked to count the stars';

async function measure(modelPath: string, env: Record<string, string>): Promise<number> {
  const server = await startServer({ env });
  try {
    const api = client(server.url);
    const registration = {
      version: 2, model_name: 'bench-llm', model_family: 'qwen2.5-instruct', model_lang: ['en'], model_ability: ['chat', 'generate'], context_length: 512,
      model_specs: [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_uri: modelPath }],
    };
    const registered = await api.post('/v1/model_registrations/LLM', { model: registration, persist: false });
    if (registered.status !== 200) throw new Error(`registration failed: ${registered.text}`);
    const launched = await api.post('/v1/models', { model_name: 'bench-llm', model_engine: 'Transformers', model_uid: 'bench', replica: REPLICAS });
    if (launched.status !== 200) throw new Error(`launch failed: ${launched.text}`);
    const url = `${server.url}/v1/completions`;
    // Calls go round robin over the replicas: REPLICAS streams at once, one on each.
    const round = async (): Promise<number> => {
      const started = performance.now();
      const runs = await Promise.all(Array.from({ length: REPLICAS }, () => readSse(url, { model: 'bench', prompt: PROMPT, max_tokens: MAX_TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } })));
      const tokens = runs.reduce((sum, r) => sum + (r.events.find((e) => e.usage)?.usage.completion_tokens as number), 0);
      return tokens / ((performance.now() - started) / 1000);
    };
    await round(); // warm-up
    let best = 0;
    for (let i = 0; i < ROUNDS; i++) best = Math.max(best, await round());
    return best;
  } finally {
    await server.stop();
    await removeHome(server.home);
  }
}

async function main(): Promise<void> {
  const work = await makeHome('hangar-bench-cpu-');
  try {
    const built = execFileSync(venvPython, [path.join(repoRoot, 'bench', 'fixtures', 'bench_llm.py'), 'build', path.join(work, 'model')], {
      encoding: 'utf8', env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
    });
    const modelPath = JSON.parse(built.trim().split('\n').pop()!).path as string;
    const sized = await measure(modelPath, {});
    const everyCore = await measure(modelPath, { HANGAR_RUNTIME_CPU_THREADS: '0' });
    report(`cpu_replicas_tokens_per_s: ${REPLICAS} replicas, one stream each, pools sized to a share of the cores vs every pool on every core`, sized, everyCore, 'tok/s', { target: '> 1' });
  } finally {
    await removeHome(work);
  }
  await writeResults('cpu-replicas');
}

await main();
