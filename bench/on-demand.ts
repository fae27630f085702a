/**
 * Models on demand (issue 38; docs/on-demand.md), two figures with their baselines
 * measured in the same run:
 *
 * 1. Wake: a request for an on-demand model that was evicted, to its first streamed
 *    token, with the warm spare on (each wake waits for a spare that has finished its
 *    imports, as on an idle service), against the cold launch of the same model (no
 *    spare: `POST /v1/models` until READY, then the same request's first token).
 *    Targets: no slower than the cold launch, and at most 1 s for the tiny model.
 * 2. Throughput: tokens/s of a model loaded on demand against the same model launched
 *    by hand, on one server, requests alternating. Target: >= 0.97.
 */
import { report, writeResults } from './lib/report.js';
import { readSse } from './lib/sse.js';
import { client, removeHome, startServer, type TestServer } from './lib/server.js';
import { tinyLlm, tinyLlmRegistration } from '../test/integration/harness/tiny-models.js';

const WAKES = 5;
const ROUNDS = 7;
const MAX_TOKENS = 200;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function register(server: TestServer, modelDir: string): Promise<ReturnType<typeof client>> {
  const api = client(server.url);
  const reg = await api.post('/v1/model_registrations/LLM', tinyLlmRegistration('bench-tiny', modelDir));
  if (reg.status !== 200) throw new Error(`registration failed: ${reg.text}`);
  return api;
}

const firstToken = async (server: TestServer, model: string): Promise<number> => {
  const run = await readSse(`${server.url}/v1/completions`, { model, prompt: 'Once upon a time', max_tokens: 1, stream: true });
  return run.firstTextAt - run.startedAt;
};

/** Waits until the server has logged `n` finished spare preloads (the spare's own log line). */
async function preloads(server: TestServer, n: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (server.logs.filter((l) => typeof l.msg === 'string' && l.msg.includes('preloaded ')).length < n) {
    if (Date.now() > deadline) throw new Error('the warm spare did not finish its imports within 120 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Cold launches: no spare, POST /v1/models until READY plus the first token. */
async function coldLaunches(modelDir: string): Promise<number[]> {
  const server = await startServer({ env: { HANGAR_WARM_SPARE: '0' } });
  try {
    const api = await register(server, modelDir);
    const times: number[] = [];
    for (let i = 0; i < WAKES; i++) {
      const started = performance.now();
      const launch = await api.post('/v1/models', { model_name: 'bench-tiny', model_engine: 'Transformers', model_uid: 'tiny', n_gpu: null });
      if (launch.status !== 200) throw new Error(`launch failed: ${launch.text}`);
      await firstToken(server, 'tiny');
      times.push(performance.now() - started);
      await api.delete('/v1/models/tiny');
    }
    return times;
  } finally {
    await server.stop();
    await removeHome(server.home);
  }
}

/**
 * Wakes: two on-demand entries, a budget that holds one; each request evicts the other.
 * First each wake finds a spare that has finished its imports; then back to back, as
 * a client alternating between two models would, the spare still starting.
 */
async function wakes(modelDir: string): Promise<{ rested: number[]; backToBack: number[] }> {
  const server = await startServer({ env: { HANGAR_WARM_SPARE: '' }, args: ['--on-demand', '--memory-budget', '700MiB'] });
  try {
    const api = await register(server, modelDir);
    for (const uid of ['a', 'b']) {
      const added = await api.post('/v1/on_demand/models', { model_name: 'bench-tiny', model_engine: 'Transformers', model_uid: uid, n_gpu: null });
      if (added.status !== 200) throw new Error(`on-demand entry failed: ${added.text}`);
    }
    await preloads(server, 1);
    await firstToken(server, 'a'); // a is loaded; from here on every request is a wake
    const rested: number[] = [];
    for (let i = 0; i < WAKES; i++) {
      await preloads(server, i + 2);
      rested.push(await firstToken(server, i % 2 === 0 ? 'b' : 'a'));
    }
    const backToBack: number[] = [];
    for (let i = 0; i < WAKES; i++) backToBack.push(await firstToken(server, (WAKES + i) % 2 === 0 ? 'b' : 'a'));
    return { rested, backToBack };
  } finally {
    await server.stop();
    await removeHome(server.home);
  }
}

/** Tokens/s of one completion of MAX_TOKENS tokens (ignore_eos: always that many). */
async function tokensPerSecond(api: ReturnType<typeof client>, model: string): Promise<number> {
  const started = performance.now();
  const done = await api.post('/v1/completions', { model, prompt: 'Once upon a time', max_tokens: MAX_TOKENS, ignore_eos: true, temperature: 0 });
  if (done.status !== 200) throw new Error(`completion failed: ${done.text}`);
  return done.body.usage.completion_tokens / ((performance.now() - started) / 1000);
}

async function throughput(modelDir: string): Promise<{ onDemand: number[]; byHand: number[] }> {
  const server = await startServer({ args: ['--on-demand'] });
  try {
    const api = await register(server, modelDir);
    await api.post('/v1/on_demand/models', { model_name: 'bench-tiny', model_engine: 'Transformers', model_uid: 'od', n_gpu: null });
    const hand = await api.post('/v1/models', { model_name: 'bench-tiny', model_engine: 'Transformers', model_uid: 'hand', n_gpu: null });
    if (hand.status !== 200) throw new Error(`launch failed: ${hand.text}`);
    await tokensPerSecond(api, 'od'); // loads it
    await tokensPerSecond(api, 'hand');
    const onDemand: number[] = [];
    const byHand: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      onDemand.push(await tokensPerSecond(api, 'od'));
      byHand.push(await tokensPerSecond(api, 'hand'));
    }
    return { onDemand, byHand };
  } finally {
    await server.stop();
    await removeHome(server.home);
  }
}

async function main(): Promise<void> {
  const model = tinyLlm();
  const cold = await coldLaunches(model.path);
  const { rested: wake, backToBack } = await wakes(model.path);
  const { onDemand, byHand } = await throughput(model.path);
  report('on_demand_wake_ms: an evicted on-demand model to its first token (warm spare) vs a cold launch to its first token', median(wake), median(cold), 'ms', { lowerIsBetter: true, target: '<= 1000 ms and <= cold' });
  report('on_demand_wake_back_to_back_ms: wakes one after another (the spare still starting) vs the same cold launch', median(backToBack), median(cold), 'ms', { lowerIsBetter: true, target: '<= cold' });
  report('on_demand_tokens_per_s: a model loaded on demand vs the same model launched by hand', median(onDemand), median(byHand), 'tokens/s', { target: '>= 0.97' });
  console.log(`(wakes ms: ${wake.map(Math.round).join(', ')}; back to back: ${backToBack.map(Math.round).join(', ')}; cold ms: ${cold.map(Math.round).join(', ')}; tokens/s on demand: ${onDemand.map((t) => t.toFixed(0)).join(', ')}; by hand: ${byHand.map((t) => t.toFixed(0)).join(', ')})`);
  await writeResults('on-demand');
}

await main();
