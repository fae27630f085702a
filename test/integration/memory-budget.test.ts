import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinySklearn } from './harness/fixtures.js';
import { client } from './harness/http.js';
import { processPids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyEmbedder, tinyGguf, tinyLlm } from './harness/tiny-models.js';

const MIB = 1024 * 1024;

const vmRss = (pid: number): number => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))![1]) * 1024;
const BUDGET = 1300 * MIB;

/**
 * The memory estimate against what real runtimes measure, and the budget that refuses
 * a launch before anything starts (docs/on-demand.md, "Memory estimate", "Memory budget").
 */
describe('memory estimate and budget', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startServer({ args: ['--memory-budget', `${BUDGET / MIB}MiB`] });
    api = client(server.url);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
  });

  const runtimes = (): Promise<number[]> =>
    processPids(({ cmdline }) => (cmdline.includes('hangar_runtime') || cmdline.includes('llama-runtime')) && cmdline.includes(server.home));

  it('estimates each engine within 25% of the memory its runtime measures', async () => {
    const gguf = tinyGguf();
    const launches = {
      tf: { model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_format: 'pytorch', model_size_in_billions: '0_5', model_path: tinyLlm().path },
      lc: { model_name: 'qwen2.5-instruct', model_engine: 'llama.cpp', model_format: 'ggufv2', model_size_in_billions: '0_5', quantization: 'q4_k_m', model_path: gguf.files.q8_0 },
      st: { model_name: 'bge-small-en-v1.5', model_type: 'embedding', model_engine: 'sentence_transformers', model_path: tinyEmbedder().path },
    };
    for (const [uid, body] of Object.entries(launches)) {
      const launched = await api.post('/v1/models', { ...body, model_uid: uid });
      expect(launched.status, launched.text).toBe(200);
    }
    expect((await api.post('/v1/completions', { model: 'tf', prompt: 'Hello', max_tokens: 8 })).status).toBe(200);
    expect((await api.post('/v1/completions', { model: 'lc', prompt: 'Hello', max_tokens: 8 })).status).toBe(200);
    expect((await api.post('/v1/embeddings', { model: 'st', input: ['Hello there', 'again'] })).status).toBe(200);
    for (const uid of Object.keys(launches)) {
      let described: Record<string, any> = {};
      // The runtime reports its resident memory with each heartbeat (about once a second).
      expect(await waitFor(async () => {
        described = (await api.get(`/v1/models/${uid}`)).body;
        return typeof described.replica_memory?.[0]?.rss_bytes === 'number';
      }, 10_000)).toBe(true);
      const estimate = described.memory_estimate as number;
      const measured = described.replica_memory[0].rss_bytes as number;
      expect(described.memory_estimate_detail).toMatchObject({ basis: 'files' });
      expect(Math.abs(estimate - measured) / measured, `${uid}: estimate ${estimate}, measured ${measured}`).toBeLessThanOrEqual(0.25);
      if (uid === 'lc') {
        // llama-server holds the weights and the KV cache: the replica's memory counts it
        // beside the runtime (docs/runtime-protocol.md, "Stats").
        const [runtime] = await processPids(({ cmdline }) => cmdline.includes('llama-runtime') && cmdline.includes(server.home));
        const [serverPid] = await processPids(({ cmdline, ppid }) => ppid === runtime && cmdline.includes('llama-server'));
        expect(serverPid, 'the llama.cpp replica runs on llama-server').toBeDefined();
        // Read a second apart from the heartbeat's reading: within 10%.
        expect(measured).toBeGreaterThan(0.9 * (vmRss(runtime!) + vmRss(serverPid!)));
      }
    }
    // The engines table shows an estimate before anything is launched.
    const engines = (await api.get('/v1/engines/qwen2.5-instruct')).body;
    const half = engines['llama.cpp'].find((e: { model_size_in_billions: string }) => e.model_size_in_billions === '0_5');
    expect(half.memory_estimates.q4_k_m).toBeGreaterThan(200 * MIB);
    expect(half.memory_estimate).toBe(Object.values(half.memory_estimates)[0]);
  }, 120_000);

  it('refuses a launch past the budget before any process starts, naming the estimate, what is free and who holds it', async () => {
    const sklearn = tinySklearn();
    const definition = { model_name: 'clf', model_uri: sklearn.modelPath, launcher: 'sklearn', launcher_args: '{}' };
    expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: false })).status).toBe(200);
    const memory = (await api.get('/v1/memory')).body.devices[0];
    expect(memory).toMatchObject({ device: 'cpu', budget_bytes: BUDGET });
    expect(memory.models.map((m: { model_uid: string }) => m.model_uid).sort()).toEqual(['lc', 'st', 'tf']);
    const before = await runtimes();
    const refused = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'clf' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('insufficient_memory');
    expect(refused.body.error.message).toMatch(/Model clf requires more memory than is available: it needs about \d+ MiB of host memory .* and \d+ MiB of the 1\.27 GiB budget is free; held by (tf|st|lc) \(/);
    expect(refused.body.error.message).toContain('force: true');
    // The same answer without waiting for READY (what the CLI and the web UI send).
    const early = await api.post('/v1/models?wait_ready=false', { model_name: 'clf', model_type: 'flexible', model_uid: 'clf' });
    expect([early.status, early.body.error?.code]).toEqual([400, 'insufficient_memory']);
    // Nothing started, nothing left behind: no runtime, no record, the uid is free.
    expect(await runtimes()).toEqual(before);
    expect((await api.get('/v1/models/clf')).status).toBe(404);
    expect((await api.get('/v1/models/instances')).body.map((i: { model_uid: string }) => i.model_uid).sort()).toEqual(['lc', 'st', 'tf']);
    // Models launched by hand are never evicted to make room.
    for (const uid of ['tf', 'lc', 'st']) expect((await api.get(`/v1/models/${uid}`)).status).toBe(200);
    // One more replica is more memory too: refused before it starts.
    const replica = await api.post('/v1/models/st/replicas', {});
    expect(replica.status).toBe(400);
    expect(replica.body.error.code).toBe('insufficient_memory');
    expect((await api.get('/v1/models/st/replicas')).body).toHaveLength(1);
    expect(await runtimes()).toEqual(before);

    const forced = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'clf', force: true });
    expect(forced.status, forced.text).toBe(200);
    const predicted = await api.post('/v1/flexible/infers', { model: 'clf', args: [sklearn.rows] });
    expect(predicted.body).toEqual(sklearn.predictions);
    const badForce = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'clf2', force: 'yes' });
    expect(badForce.status).toBe(400);
    expect(badForce.body.error.param).toBe('force');
  }, 60_000);

  it('stops a model launched with keep_alive once it has been idle that long', async () => {
    const launched = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'brief', keep_alive: '1s', force: true });
    expect(launched.status, launched.text).toBe(200);
    expect((await api.get('/v1/models/brief')).body).toMatchObject({ keep_alive: 1, on_demand: false });
    expect(await waitFor(async () => (await api.get('/v1/models/brief')).status === 404, 15_000)).toBe(true);
    const bad = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'x', keep_alive: '5 minutes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('keep_alive');
  }, 30_000);
});

describe('restore within the memory budget', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    if (servers[0]) await removeHome(servers[0].home);
  });

  it('restores the models within the budget before one forced past it, so a forced launch never takes their room', async () => {
    // An sklearn runtime is estimated at about 340 MiB: two fit in 1000 MiB, one in 500 MiB.
    const first = await startServer({ args: ['--memory-budget', '1000MiB'] });
    servers.push(first);
    const api = client(first.url);
    const sklearn = tinySklearn();
    const definition = { model_name: 'clf', model_uri: sklearn.modelPath, launcher: 'sklearn', launcher_args: '{}' };
    expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: true })).status).toBe(200);
    // Saved first: the forced one (it would have fitted anyway), then one within the budget.
    const forced = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'forced', force: true });
    expect(forced.status, forced.text).toBe(200);
    expect((await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'fits' })).status).toBe(200);
    await first.stop();

    // A smaller budget now: one fits. Restored in saved order, the forced one took the room.
    const second = await startServer({ home: first.home, args: ['--memory-budget', '500MiB'] });
    servers.push(second);
    const again = client(second.url);
    const states = async () => Object.fromEntries(((await again.get('/v1/models/instances')).body as Array<{ model_uid: string; status: string }>).map((i) => [i.model_uid, i.status]));
    const settled = async () => {
      const now = await states();
      return Object.keys(now).length === 2 && Object.values(now).every((s) => s === 'READY' || s === 'ERROR');
    };
    expect(await waitFor(settled, 60_000), JSON.stringify(await states())).toBe(true);
    expect(await states()).toEqual({ fits: 'READY', forced: 'READY' });
  }, 150_000);
});
