import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinySklearn, writePythonLauncher, type SklearnFixture } from './harness/fixtures.js';
import { runCli } from './harness/cli.js';
import { client } from './harness/http.js';
import { readSse } from './harness/sse-client.js';
import { tinyLlm } from './harness/tiny-models.js';
import { processPids, waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

const MIB = 1024 * 1024;
// An sklearn runtime is estimated at about 340 MiB (src/registry/runtime-overhead.ts)
// and measures about as much: two fit in this budget, three do not.
const BUDGET = 900 * MIB;

/** Runtime processes of this server (their sockets live under its home). */
function runtimesOf(server: TestServer): Promise<number[]> {
  return processPids(({ cmdline }) => cmdline.includes('hangar_runtime') && cmdline.includes(server.home));
}

/**
 * Models on demand (docs/on-demand.md) with real runtimes: three scikit-learn models
 * listed on demand, a budget that fits two, a launcher whose calls take as long as
 * they are asked to (for the request in flight), and keep_alive.
 */
describe('models on demand within a memory budget', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;
  let sklearn: SklearnFixture;

  beforeAll(async () => {
    work = await makeHome('hangar-on-demand-work-');
    sklearn = tinySklearn();
    const sleeper = path.join(work, 'sleeper.py');
    await writeFile(sleeper, 'import time\n\ndef load():\n    return None\n\ndef infer(model, seconds):\n    time.sleep(seconds)\n    return {"slept": seconds}\n');
    const slowLoader = path.join(work, 'slow_loader.py');
    await writeFile(slowLoader, 'import time\n\ndef load():\n    time.sleep(3)\n    return None\n\ndef infer(model, *args):\n    return {"ok": True}\n');
    server = await startServer({ args: ['--on-demand', '--memory-budget', String(BUDGET)], env: { HANGAR_IDLE_CHECK_MS: '100' } });
    api = client(server.url);
    const scaler = await writePythonLauncher(work);
    for (const [name, uri, launcher, args] of [['clf', sklearn.modelPath, 'sklearn', '{}'], ['sleeper', sleeper, 'python', '{}'], ['scaler', scaler, 'python', '{"scale": 3, "offset": 1}'], ['slow-loader', slowLoader, 'python', '{}']] as const) {
      const definition = { model_name: name, model_uri: uri, launcher, launcher_args: args };
      expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: true })).status).toBe(200);
    }
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  const infer = (model: string, extra: Record<string, unknown> = {}) => api.post('/v1/flexible/infers', { model, args: [sklearn.rows], ...extra });
  const entry = (uid: string, extra: Record<string, unknown> = {}) => api.post('/v1/on_demand/models', { model_name: 'clf', model_type: 'flexible', model_uid: uid, ...extra });
  const status = async (uid: string): Promise<string> => {
    const records = (await api.get(`/v1/models/instances?model_uid=${uid}`)).body as Array<{ status: string }>;
    return records[0]?.status ?? 'UNLOADED';
  };
  const unloadAll = async (): Promise<void> => {
    for (const m of (await api.get('/v1/models/instances')).body as Array<{ model_uid: string }>) await api.delete(`/v1/models/${m.model_uid}`);
  };

  it('keeps entries, lists them as available, and refuses bad ones by field', async () => {
    for (const uid of ['a', 'b', 'c']) expect((await entry(uid)).body).toEqual({ model_uid: uid });
    const listed = await api.get('/v1/on_demand/models');
    expect(listed.body.enabled).toBe(true);
    expect(listed.body.list.map((e: { model_uid: string; status: string; keep_alive: string }) => [e.model_uid, e.status, e.keep_alive])).toEqual([
      ['a', 'UNLOADED', '5m'], ['b', 'UNLOADED', '5m'], ['c', 'UNLOADED', '5m'],
    ]);
    // OpenAI clients list before they call: the entries are there.
    const models = await api.get('/v1/models');
    expect(models.body.data.filter((m: { on_demand?: boolean }) => m.on_demand).map((m: { id: string }) => m.id)).toEqual(['a', 'b', 'c']);
    expect((await api.get('/v1/models/a')).body).toMatchObject({ id: 'a', status: 'UNLOADED', model_name: 'clf' });
    // Checked as a launch is.
    const unknown = await api.post('/v1/on_demand/models', { model_name: 'no-such-model', model_type: 'flexible' });
    const launched = await api.post('/v1/models', { model_name: 'no-such-model', model_type: 'flexible' });
    expect([unknown.status, unknown.body.error.code]).toEqual([launched.status, launched.body.error.code]);
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    // A registration that a restart forgets cannot back an entry a restart keeps.
    const transient = { model_name: 'transient', model_uri: sklearn.modelPath, launcher: 'sklearn', launcher_args: '{}' };
    expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(transient), persist: false })).status).toBe(200);
    for (const route of ['/v1/on_demand/models', '/v1/autostart/models']) {
      const refused = await api.post(route, { model_name: 'transient', model_type: 'flexible' });
      expect([refused.status, refused.body.error?.param], route).toEqual([400, 'model_name']);
      expect(refused.body.error.message).toContain('registered without persist');
    }
    expect((await api.delete('/v1/model_registrations/flexible/transient')).status).toBe(200);
    // A model_path that is not there is refused now, as a launch refuses it, not at the first request.
    const missing = await entry('x', { model_path: path.join(server.home, 'no-such-model') });
    expect([missing.status, missing.body.error?.code, missing.body.error?.param], missing.text).toEqual([400, 'model_path_not_found', 'model_path']);
    const badKeep = await entry('x', { keep_alive: 'soon' });
    expect(badKeep.status).toBe(400);
    expect(badKeep.body.error.param).toBe('keep_alive');
    expect((await api.delete('/v1/on_demand/models/nope')).body.error.code).toBe('on_demand_not_found');
    // The list is kept in the home.
    const saved = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(path.join(server.home, 'state', 'on-demand.json'), 'utf8')));
    expect(saved.models.map((m: { uid: string }) => m.uid)).toEqual(['a', 'b', 'c']);
  });

  it('refuses a request of another model type before the entry loads', async () => {
    const asked = [
      await api.post('/v1/chat/completions', { model: 'a', messages: [{ role: 'user', content: 'hi' }] }),
      await api.post('/v1/embeddings', { model: 'a', input: 'hi' }),
      await api.post('/v1/messages', { model: 'a', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
    ];
    for (const r of asked) {
      expect([r.status, r.body.error?.code, r.body.error?.param], r.text).toEqual([400, 'wrong_model_type', 'model']);
      expect(r.body.error.message).toContain('a is of type flexible');
    }
    const tokens = await api.get('/tokenizer_info?model=a');
    expect([tokens.status, tokens.body.error?.code]).toEqual([400, 'wrong_model_type']);
    expect(await status('a')).toBe('UNLOADED');
    expect((await api.get('/v1/models/a/events')).body).toEqual([]);
    // An LLM without the ability the route needs (its registration's): refused before it
    // loads too, where it loaded (and evicted another model for it) to answer the same.
    expect((await api.post('/v1/on_demand/models', { model_name: 'simulator', model_engine: 'simulator', model_uid: 'sim-od' })).status).toBe(200);
    const embed = await api.post('/v1/embeddings', { model: 'sim-od', input: 'hi' });
    expect([embed.status, embed.body.error?.code, embed.body.error?.param], embed.text).toEqual([400, 'ability_missing', 'model']);
    expect(embed.body.error.message).toContain('Model sim-od does not support embeddings');
    expect(await status('sim-od')).toBe('UNLOADED');
    expect((await api.delete('/v1/on_demand/models/sim-od')).status).toBe(200);
    expect(await runtimesOf(server)).toEqual([]);
  });

  it('serves three models round robin 60 times in a budget that fits two: no error, never more than two loaded, never past the budget', async () => {
    // A user's Python launcher (load + infer), the quickest real model to load here: 60
    // calls round robin over three models, two of which fit, load on nearly every call.
    const uids = ['r1', 'r2', 'r3'];
    for (const uid of uids) expect((await api.post('/v1/on_demand/models', { model_name: 'scaler', model_type: 'flexible', model_uid: uid })).status).toBe(200);
    let most = 0;
    let mostBytes = 0;
    let mostProcesses = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const cpu = (await api.get('/v1/memory')).body.devices[0];
        most = Math.max(most, cpu.models.length);
        mostBytes = Math.max(mostBytes, cpu.used_bytes);
        mostProcesses = Math.max(mostProcesses, (await runtimesOf(server)).length);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const failures: string[] = [];
    const pids = new Set<number>();
    try {
      for (let i = 0; i < 60; i++) {
        const uid = uids[i % 3]!;
        const reply = await api.post('/v1/flexible/infers', { model: uid, args: [[i, 2]] });
        if (reply.status !== 200 || JSON.stringify(reply.body.values) !== JSON.stringify([3 * i + 1, 7])) failures.push(`${i} ${uid}: ${reply.status} ${reply.text}`);
        else pids.add(reply.body.pid);
      }
    } finally {
      watching = false;
      await watcher;
    }
    expect(failures).toEqual([]);
    expect(most).toBeLessThanOrEqual(2);
    expect(mostProcesses).toBeLessThanOrEqual(2);
    expect(mostBytes).toBeGreaterThan(0);
    expect(mostBytes).toBeLessThanOrEqual(BUDGET);
    // Round robin over three with room for two: the model each call names is the one
    // evicted last, so every call is served by a process loaded for it.
    expect(pids.size).toBe(60);
    // Every load and eviction is an event of the entry, and a metric.
    const events = (await api.get('/v1/models/r1/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events.filter((e: string) => e === 'Load model on demand').length).toBe(20);
    expect(events.some((e: string) => e.startsWith('Evicted to make room for'))).toBe(true);
    const metrics = (await api.get('/metrics')).text;
    const loads = Number(/hangar_model_loads_total\{model_name="scaler",trigger="on_demand",outcome="ready"\} (\d+)/.exec(metrics)?.[1]);
    const evictions = Number(/hangar_model_evictions_total\{model_name="scaler",reason="memory"\} (\d+)/.exec(metrics)?.[1]);
    expect(loads).toBe(60);
    expect(evictions).toBe(58);
    expect(metrics).toMatch(/hangar_model_load_seconds_count\{model_name="scaler",trigger="on_demand"\} 60/);
    for (const uid of uids) await api.delete(`/v1/on_demand/models/${uid}`);
  }, 180_000);

  it('loads once for 20 concurrent first requests, and each waits for that load', async () => {
    await unloadAll();
    await entry('d');
    const before = await runtimesOf(server);
    expect(before).toEqual([]);
    const replies = await Promise.all(Array.from({ length: 20 }, () => infer('d')));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    const events = (await api.get('/v1/models/d/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events.filter((e: string) => e === 'Load model on demand')).toHaveLength(1);
    expect((await runtimesOf(server)).length).toBe(1);
  }, 120_000);

  it('unloads a model idle for its keep_alive, and at once after a request that says keep_alive 0', async () => {
    await unloadAll();
    await entry('e', { keep_alive: '1s' });
    expect((await infer('e')).status).toBe(200);
    expect(await status('e')).toBe('READY');
    const described = (await api.get('/v1/models/e')).body;
    expect(described).toMatchObject({ on_demand: true, keep_alive: 1 });
    expect(await waitFor(async () => (await status('e')) === 'UNLOADED', 10_000)).toBe(true);
    const events = (await api.get('/v1/models/e/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events.some((e: string) => /^Unloaded: idle for \d+s \(keep_alive 1s\)$/.test(e))).toBe(true);

    // Ollama's per-request keep_alive: 0 unloads once this answer is done.
    expect((await infer('a', { keep_alive: 0 })).status).toBe(200);
    expect(await waitFor(async () => (await status('a')) === 'UNLOADED', 10_000)).toBe(true);
    // A bad one names its field, and loads nothing.
    const bad = await infer('b', { keep_alive: 'later' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('keep_alive');
    expect(await status('b')).toBe('UNLOADED');
  }, 60_000);

  it('a launch by hand of a model loaded on demand keeps it: no longer evicted or unloaded by the entry, and a second launch sets keep_alive', async () => {
    await unloadAll();
    await entry('adopt', { keep_alive: '1s' });
    // Listed (UNLOADED) but not loaded: terminating it says what it is and how to remove it.
    const terminate = await api.delete('/v1/models/adopt');
    expect([terminate.status, terminate.body.error?.code]).toEqual([404, 'model_not_found']);
    expect(terminate.body.detail).toContain('an on-demand entry, not loaded now: remove it with DELETE /v1/on_demand/models/adopt');
    expect((await infer('adopt')).status).toBe(200);
    // The same launch by hand: before, 200 and nothing changed (it unloaded a second later).
    const byHand = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'adopt' });
    expect(byHand.status, byHand.text).toBe(200);
    expect((await api.get('/v1/models/adopt')).body).toMatchObject({ on_demand: false, keep_alive: -1 });
    expect((await api.delete('/v1/on_demand/models/adopt')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await status('adopt')).toBe('READY');
    // A second launch by hand with a keep_alive sets it, counted from now.
    expect((await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'adopt', keep_alive: '1s' })).status).toBe(200);
    expect((await api.get('/v1/models/adopt')).body).toMatchObject({ keep_alive: 1 });
    const events = (await api.get('/v1/models/adopt/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events).toContain('Launched by hand: no longer loaded on demand; keep_alive never (kept until terminated)');
    expect(events).toContain('keep_alive set to 1 s by a second launch');
    expect(await waitFor(async () => (await status('adopt')) === 'UNLOADED', 10_000)).toBe(true);
  }, 60_000);

  it('refuses to unregister a model an on-demand entry loads, naming the entry', async () => {
    // Before: unregistered, and the entry's next request was a 404 naming a model the client never sent.
    await entry('needs-clf');
    const refused = await api.delete('/v1/model_registrations/flexible/clf');
    expect([refused.status, refused.body.error?.code], refused.text).toEqual([409, 'registration_in_use']);
    expect(refused.body.detail).toContain('needs-clf (on demand)');
    await api.delete('/v1/on_demand/models/needs-clf');
  });

  it('force unloads idle on-demand models first, and passes the budget only when nothing idle is left', async () => {
    await unloadAll();
    await entry('old-idle');
    await entry('new-idle');
    expect((await infer('old-idle')).status).toBe(200);
    expect((await infer('new-idle')).status).toBe(200);
    const forced = await api.post('/v1/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'forced', force: true });
    expect(forced.status, forced.text).toBe(200);
    // Before: admitted past the budget with both idle models still loaded.
    expect(await status('old-idle')).toBe('UNLOADED');
    expect(await status('new-idle')).toBe('READY');
    const memory = (await api.get('/v1/memory')).body.devices.find((d: { device: string }) => d.device === 'cpu');
    expect(memory.used_bytes).toBeLessThanOrEqual(memory.budget_bytes);
    await api.delete('/v1/models/forced');
    await api.delete('/v1/on_demand/models/old-idle');
    await api.delete('/v1/on_demand/models/new-idle');
  }, 60_000);

  it('never evicts a model with a request in flight: a load that needs its room waits for it to finish', async () => {
    await unloadAll();
    for (const uid of ['slow1', 'slow2']) await api.post('/v1/on_demand/models', { model_name: 'sleeper', model_type: 'flexible', model_uid: uid });
    const started = Date.now();
    const slowCalls = ['slow1', 'slow2'].map((uid) => api.post('/v1/flexible/infers', { model: uid, args: [4] }));
    expect(await waitFor(async () => (await status('slow1')) === 'READY' && (await status('slow2')) === 'READY', 30_000)).toBe(true);
    // Both slots are held by requests in flight: loading a waits until one lets go.
    const third = await infer('a');
    expect(third.status, third.text).toBe(200);
    const slow = await Promise.all(slowCalls);
    for (const reply of slow) {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual({ slept: 4 });
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    const evicted = await Promise.all(['slow1', 'slow2'].map(async (uid) => (await api.get(`/v1/models/${uid}/events`)).body.some((e: { event_content: string }) => e.event_content === 'Evicted to make room for a')));
    expect(evicted.filter(Boolean)).toHaveLength(1);
  }, 90_000);

  it('streams from a model a request loads: the stream\'s first byte comes after the load', async () => {
    await unloadAll();
    const added = await api.post('/v1/on_demand/models', { model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_format: 'pytorch', model_size_in_billions: '0_5', model_path: tinyLlm().path, model_uid: 'chatty', n_gpu: null });
    expect(added.status, added.text).toBe(200);
    const stream = await readSse(server.url, '/v1/chat/completions', { model: 'chatty', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5, stream: true });
    // The status and headers were sent once the model was ready: a real 200, an SSE stream.
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toContain('text/event-stream');
    expect(stream.data.at(-1)).toBe('[DONE]');
    const chunks = stream.data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks[0].model).toBe('chatty');
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('').length).toBeGreaterThan(0);
    const events = (await api.get('/v1/models/chatty/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events.slice(0, 2)).toEqual(['Load model on demand', 'Model is ready']);
  }, 60_000);

  it('loads an entry for vLLM\'s tokenizer routes, as for inference', async () => {
    // The simulator loads in a moment; it has no tokenizer, so its engine's refusal (not a 404) says the load happened.
    expect((await api.post('/v1/on_demand/models', { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', model_uid: 'sim-od' })).status).toBe(200);
    const info = await api.get('/tokenizer_info?model=sim-od');
    expect([info.status, info.body.error.code], info.text).toEqual([400, 'inference_invalid_input']);
    expect(info.body.error.message).toContain('tokenizer_info');
    const events = (await api.get('/v1/models/sim-od/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events.slice(0, 2)).toEqual(['Load model on demand', 'Model is ready']);
    await api.delete('/v1/on_demand/models/sim-od');
  });

  it('lists an entry while it loads, and a load terminated under a waiting request is a 503 the next request gets past', async () => {
    await unloadAll();
    expect((await api.post('/v1/on_demand/models', { model_name: 'slow-loader', model_type: 'flexible', model_uid: 'slowload' })).status).toBe(200);
    const waiting = api.post('/v1/flexible/infers', { model: 'slowload', args: [] });
    expect(await waitFor(async () => (await status('slowload')) === 'CREATING', 10_000)).toBe(true);
    // Still in OpenAI's and Anthropic's lists, with its state.
    const listed = (await api.get('/v1/models')).body.data.find((m: { id: string }) => m.id === 'slowload');
    expect(listed).toMatchObject({ on_demand: true, status: 'CREATING' });
    expect((await api.get('/anthropic/v1/models')).body.data.map((m: { id: string }) => m.id)).toContain('slowload');
    // Terminated by someone else while it loads: the waiting request cancelled nothing.
    expect((await api.delete('/v1/models/slowload')).status).toBe(200);
    const cut = await waiting;
    expect([cut.status, cut.body.error?.code], cut.text).toEqual([503, 'runtime_unavailable']);
    expect(cut.headers.get('retry-after')).toBe('1');
    // Nothing held against the entry: the next request loads it again.
    const next = await api.post('/v1/flexible/infers', { model: 'slowload', args: [] });
    expect(next.status, next.text).toBe(200);
    expect((await api.get('/v1/models')).body.data.find((m: { id: string }) => m.id === 'slowload')).toMatchObject({ id: 'slowload' });
    await api.delete('/v1/on_demand/models/slowload');
  }, 60_000);

  it('answers a broken entry\'s load failure, and does not load it again for every request', async () => {
    await unloadAll();
    await api.post('/v1/on_demand/models', { model_name: 'clf', model_type: 'flexible', model_uid: 'broken', model_path: path.join(work, 'sleeper.py') });
    const first = await infer('broken');
    expect(first.status).toBeGreaterThanOrEqual(400);
    const code = first.body.error.code;
    const again = await Promise.all(Array.from({ length: 5 }, () => infer('broken')));
    expect(again.map((r) => r.body.error.code)).toEqual(Array(5).fill(code));
    const events = (await api.get('/v1/models/broken/events')).body.map((e: { event_content: string }) => e.event_content);
    expect(events.filter((e: string) => e === 'Load model on demand')).toHaveLength(1);
    expect(await runtimesOf(server)).toEqual([]);
    await api.delete('/v1/on_demand/models/broken');
  }, 60_000);

  it('is run from the CLI: on-demand add, list and remove; ps with memory, keep_alive, idle time and the budget', async () => {
    const env = { HANGAR_ENDPOINT: server.url };
    const added = await runCli(['on-demand', 'add', '-n', 'clf', '-t', 'flexible', '-u', 'cli', '--keep-alive', '90'], { env });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe('On-demand model: cli\n');
    const listed = await runCli(['on-demand', 'list'], { env });
    expect(listed.stdout).toMatch(/^cli\s+flexible\s+clf\s+1m30s\s+UNLOADED$/m);
    // `list` shows running models: an entry not loaded is counted, not shown as one.
    const running = await runCli(['list'], { env });
    expect(running.stdout).not.toMatch(/^cli\s/m);
    expect(running.stdout).toMatch(/^\d+ on-demand (entry is|entries are) not loaded now: `hangar on-demand list` lists them\.$/m);
    expect((await infer('cli')).status).toBe(200);
    const ps = await runCli(['ps'], { env });
    expect(ps.code, ps.stderr).toBe(0);
    expect(ps.stdout).toMatch(/^cli\s+clf\s+sklearn\s+READY\s+on demand\s+\d+ MiB\s+\d+ MiB\s+1m30s\s+\d+s$/m);
    expect(ps.stdout).toMatch(/^Host memory: \d+ MiB of 900 MiB budget \(\d+ MiB free\)$/m);
    const psJson = JSON.parse((await runCli(['ps', '--json'], { env })).stdout);
    expect(psJson.devices[0]).toMatchObject({ device: 'cpu', budget_bytes: BUDGET });
    const removed = await runCli(['on-demand', 'remove', 'cli'], { env });
    expect(removed.stdout).toBe('Removed on-demand model cli\n');
    const again = await runCli(['on-demand', 'remove', 'cli'], { env });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('Model cli is not in the on-demand list (HTTP 404)');
  }, 60_000);
});
