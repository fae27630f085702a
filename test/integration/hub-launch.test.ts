import { cp, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { startStandin } from './harness/hub-standins.js';
import { tinyEmbedder, tinyGguf, tinyLlm } from './harness/tiny-models.js';
import { runCli } from './harness/cli.js';

const startHub = (repos: Record<string, string>, extra: string[] = []) => startStandin('hub_standin.py', repos, extra);

/**
 * Launch by hub id (docs/registry.md, "Launch by hub id"): a GGUF repo by
 * `hf.co/<org>/<repo>:<quantization>` and a transformers repo by `<org>/<repo>`, each
 * registered from what the hub serves and then served by the real engines; the
 * refusals (unknown id, unknown quantization, hub out of reach) before any process starts.
 */
describe('launch by hub id', () => {
  let hub: Awaited<ReturnType<typeof startHub>>;
  let server: TestServer;
  let api: ReturnType<typeof client>;

  let work: string;

  beforeAll(async () => {
    // The tiny LLM's files under an architecture transformers lacks: with the repo's own code (auto_map), and without.
    work = await makeHome('hangar-hub-repos-');
    const config = JSON.parse(await readFile(path.join(tinyLlm().path, 'config.json'), 'utf8')) as Record<string, unknown>;
    for (const [name, extra] of [['own-code', { auto_map: { AutoModelForCausalLM: 'modeling_hangar.HangarForCausalLM' } }], ['new-arch', {}]] as const) {
      await cp(tinyLlm().path, path.join(work, name), { recursive: true });
      await writeFile(path.join(work, name, 'config.json'), JSON.stringify({ ...config, model_type: 'hangar_unknown_arch', ...extra }));
    }
    hub = await startHub({ 'test-org/tiny-GGUF': path.dirname(tinyGguf().files.q8_0!), 'test-org/tiny-llm': tinyLlm().path, 'test-org/tiny-embedder': tinyEmbedder().path, 'test-org/own-code': path.join(work, 'own-code'), 'test-org/new-arch': path.join(work, 'new-arch') }, ['--downloads', 'test-org/tiny-GGUF=1200', '--downloads', 'test-org/tiny-embedder=7', '--pipeline', 'test-org/tiny-embedder=feature-extraction']);
    server = await startServer({ home: await makeHome('hangar-hub-launch-'), env: { HF_HUB_OFFLINE: '', TRANSFORMERS_OFFLINE: '', HF_ENDPOINT: hub.url } });
    api = client(server.url);
  }, 120_000);

  afterAll(async () => {
    hub?.process.kill();
    await server?.stop().catch(() => {});
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('launches a GGUF repo by hf.co/<org>/<repo>:<tag>, registered from the GGUF itself, and serves chat with tools', async () => {
    const launched = await api.post('/v1/models', { model_name: 'hf.co/test-org/tiny-GGUF:Q8_0' });
    expect(launched.status, launched.text).toBe(200);
    expect(launched.body.model_uid).toBe('test-org--tiny-GGUF');

    const registration = await api.get('/v1/model_registrations/LLM/test-org--tiny-GGUF');
    expect(registration.status).toBe(200);
    const record = registration.body;
    // Both files are quantizations of the one registration; the commit read is pinned.
    expect(record.model_specs.map((s: { quantization: string }) => s.quantization).sort()).toEqual(['f32', 'q8_0']);
    expect(record.model_specs.every((s: { model_revision: string; model_id: string }) => s.model_revision.length === 40 && s.model_id === 'test-org/tiny-GGUF')).toBe(true);
    // The template comes from the GGUF's metadata; its <tool_call> blocks say tools, parsed as Hermes/Qwen.
    expect(record.chat_template).toContain('<tool_call>');
    expect(record.model_ability).toEqual(expect.arrayContaining(['chat', 'generate', 'tools']));
    expect(record.tool_parser).toBe('qwen');
    expect(record.context_length).toBeGreaterThan(0);

    const running = (await api.get('/v1/models/test-org--tiny-GGUF')).body;
    expect(running.model_engine ?? running.engine ?? JSON.stringify(running)).toMatch(/llama/);
    expect(running.quantization ?? JSON.stringify(running)).toMatch(/q8_0/i);
    const chat = await api.post('/v1/chat/completions', { model: 'test-org--tiny-GGUF', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
    expect(chat.status, chat.text).toBe(200);
    expect(chat.body.choices[0].message.role).toBe('assistant');
    // Only the chosen quantization was downloaded.
    expect(hub.asked.some((l) => /^GET \/test-org\/tiny-GGUF\/resolve\/[0-9a-f]{40}\/tiny-q8_0\.gguf range=-$/.test(l))).toBe(true);
    expect(hub.asked.some((l) => l.includes('tiny-f32.gguf range=-'))).toBe(false);
  }, 180_000);

  it('launches a transformers repo by a bare <org>/<repo>, template and stops from its tokenizer config', async () => {
    const launched = await api.post('/v1/models', { model_name: 'test-org/tiny-llm', model_uid: 'tf' });
    expect(launched.status, launched.text).toBe(200);
    const record = (await api.get('/v1/model_registrations/LLM/test-org--tiny-llm')).body;
    expect(record.model_specs).toHaveLength(1);
    expect(record.model_specs[0]).toMatchObject({ model_format: 'pytorch', quantization: 'none', model_id: 'test-org/tiny-llm' });
    expect(record.chat_template).toContain('<|im_start|>');
    expect(record.stop_token_ids.length).toBeGreaterThan(0);
    const running = (await api.get('/v1/models/tf')).body;
    expect(JSON.stringify(running)).toMatch(/Transformers/);
    const done = await api.post('/v1/completions', { model: 'tf', prompt: 'Hi', max_tokens: 3 });
    expect(done.status, done.text).toBe(200);
    expect((await api.delete('/v1/models/tf')).status).toBe(200);
  }, 180_000);

  it('refuses an unknown repo with 404 naming it, an unknown tag with what the repo offers, before any process starts', async () => {
    const before = (await api.get('/v1/models')).body.data.length;
    const unknown = await api.post('/v1/models', { model_name: 'hf.co/test-org/no-such-model' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('hub_model_not_found');
    expect(unknown.body.error.message).toContain('test-org/no-such-model');
    expect(unknown.body.error.param).toBe('model_name');
    // Asked without a token, a private repo is "not found" too: said so.
    expect(unknown.body.error.message).toContain('if it is a private or gated repository, set HF_TOKEN');
    expect((await api.get('/v1/model_registrations/LLM/test-org--no-such-model')).status).toBe(404);
    // An embedding model launched as an LLM started as one, its head at random, and wrote garbage.
    const asLlm = await api.post('/v1/models', { model_name: 'hf.co/test-org/tiny-embedder' });
    expect([asLlm.status, asLlm.body.error?.param], asLlm.text).toEqual([400, 'model_type']);
    expect(asLlm.body.error.message).toContain('"model_type": "embedding"');

    const tag = await api.post('/v1/models', { model_name: 'hf.co/test-org/tiny-GGUF:Q4_K_M', model_uid: 'q4' });
    expect(tag.status).toBe(404);
    expect(tag.body.error.code).toBe('hub_quantization_not_found');
    expect(tag.body.error.message).toMatch(/Q4_K_M.*offers .*q8_0/);

    // An architecture the runtime's transformers lacks, refused before its weights are downloaded:
    // one that brings its own code needs trust_remote_code, one that brings none cannot load.
    const own = await api.post('/v1/models', { model_name: 'hf.co/test-org/own-code' });
    expect([own.status, own.body.error?.param], own.text).toEqual([400, 'trust_remote_code']);
    expect(own.body.error.message).toMatch(/model_type hangar_unknown_arch\) is not in transformers .*auto_map/);
    const lacking = await api.post('/v1/models', { model_name: 'hf.co/test-org/new-arch', trust_remote_code: true });
    expect([lacking.status, lacking.body.error?.code, lacking.body.error?.param], lacking.text).toEqual([400, 'hub_model_unusable', 'model_name']);
    for (const repo of ['own-code', 'new-arch']) {
      await expect(stat(path.join(server.home, 'cache', 'huggingface', `models--test-org--${repo}`, 'blobs')), repo).rejects.toThrow();
    }

    const malformed = await api.post('/v1/models', { model_name: 'hf.co/a/b/c' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.param).toBe('model_name');
    expect((await api.get('/v1/models')).body.data.length).toBe(before);
  }, 60_000);

  it('does not take a registration of the same name made by hand for the repo', async () => {
    const made = await api.post('/v1/models/llm/auto-register', { model_path: tinyLlm().path, model_name: 'test-org--squat', register: true });
    expect(made.status, made.text).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'test-org/squat' });
    expect([launch.status, launch.body.error?.code, launch.body.error?.param], launch.text).toEqual([409, 'registration_conflict', 'model_name']);
    expect(launch.body.error.message).toContain('not one downloaded from test-org/squat');
    expect(hub.asked.some((line) => line.includes('squat'))).toBe(false);
    expect((await api.delete('/v1/model_registrations/LLM/test-org--squat')).status).toBe(200);
  }, 60_000);

  it('answers 503 naming the hub when it cannot be reached, and leaves nothing behind', async () => {
    const down = await api.post('/v1/models', { model_name: 'hf.co/test-org/other', envs: { HF_ENDPOINT: 'http://127.0.0.1:9' } });
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('hub_unreachable');
    expect(down.body.error.message).toContain('http://127.0.0.1:9');
    expect((await api.get('/v1/model_registrations/LLM/test-org--other')).status).toBe(404);
  }, 60_000);

  it('answers a connection cut while it reads the GGUF header with 503, which a retry gets past, not 400', async () => {
    const cut = await startHub({ 'test-org/cut-GGUF': path.dirname(tinyGguf().files.q8_0!) }, ['--cut-once', 'tiny-q8_0.gguf:1000']);
    try {
      const body = { model_name: 'hf.co/test-org/cut-GGUF:q8_0', model_uid: 'cut', envs: { HF_ENDPOINT: cut.url } };
      const first = await api.post('/v1/models', body);
      expect([first.status, first.body.error?.code], first.text).toEqual([503, 'hub_unreachable']);
      expect(first.body.error.message).toContain('tiny-q8_0.gguf');
      expect((await api.get('/v1/model_registrations/LLM/test-org--cut-GGUF')).status).toBe(404);
      const again = await api.post('/v1/models', body);
      expect(again.status, again.text).toBe(200);
      expect((await api.delete('/v1/models/cut')).status).toBe(200);
    } finally {
      cut.process.kill();
    }
  }, 120_000);

  it('keeps an on-demand entry given by hub id, registered from the hub as a launch registers it', async () => {
    const kept = await api.post('/v1/on_demand/models', { model_name: 'hf.co/test-org/tiny-GGUF:q8_0', model_uid: 'od-gguf' });
    expect([kept.status, kept.body.model_uid], kept.text).toEqual([200, 'od-gguf']);
    const listed = (await api.get('/v1/on_demand/models')).body.list.find((e: { model_uid: string }) => e.model_uid === 'od-gguf');
    expect(listed).toMatchObject({ model_name: 'test-org--tiny-GGUF', model_engine: 'llama.cpp', quantization: 'q8_0', status: 'UNLOADED' });
    expect((await api.delete('/v1/on_demand/models/od-gguf')).status).toBe(200);
  });

  it('registers a repo once for two launches of it at once, and both launch', async () => {
    const twin = await startHub({ 'test-org/twin-GGUF': path.dirname(tinyGguf().files.q8_0!) });
    try {
      const launch = (uid: string) => api.post('/v1/models', { model_name: 'hf.co/test-org/twin-GGUF:q8_0', model_uid: uid, envs: { HF_ENDPOINT: twin.url } });
      const both = await Promise.all([launch('twin-a'), launch('twin-b')]);
      expect(both.map((r) => [r.status, r.body.model_uid]), JSON.stringify(both.map((r) => r.body))).toEqual([[200, 'twin-a'], [200, 'twin-b']]);
      // The hub's API was asked for the repo once: one registration served both.
      expect(twin.asked.filter((line) => /^GET \/api\/models\/test-org\/twin-GGUF(\/revision\/[^ ]+)?( |$)/.test(line))).toHaveLength(1);
      for (const uid of ['twin-a', 'twin-b']) expect((await api.delete(`/v1/models/${uid}`)).status).toBe(200);
    } finally {
      twin.process.kill();
    }
  }, 120_000);

  it('shows a launch by hub id as CREATING from its POST, and a cancel or terminate while the hub is read stops it', async () => {
    const slow = await startHub({ 'test-org/slow-GGUF': path.dirname(tinyGguf().files.q8_0!) }, ['--slow-info', '2']);
    try {
      const body = (uid: string) => ({ model_name: 'hf.co/test-org/slow-GGUF:q8_0', model_uid: uid, envs: { HF_ENDPOINT: slow.url } });
      for (const [uid, stop] of [['slow-cancel', 'cancel'], ['slow-delete', 'delete']] as const) {
        const launching = api.post('/v1/models', body(uid));
        expect(await waitFor(async () => (await api.get(`/v1/models/${uid}`)).status === 200, 5_000)).toBe(true);
        expect((await api.get(`/v1/models/${uid}`)).body).toMatchObject({ id: uid, status: 'CREATING', model_name: 'hf.co/test-org/slow-GGUF:q8_0' });
        expect((await api.get(`/v1/models/instances?model_uid=${uid}`)).body).toMatchObject([{ model_uid: uid, status: 'CREATING' }]);
        const stopped = stop === 'cancel' ? await api.post(`/v1/models/${uid}/cancel`, {}) : await api.delete(`/v1/models/${uid}`);
        expect(stopped.status, stopped.text).toBe(200);
        const answer = await launching;
        expect([answer.status, answer.body.error?.code], answer.text).toEqual([499, 'launch_cancelled']);
        expect((await api.get(`/v1/models/${uid}`)).status).toBe(404);
      }
      // Nothing was launched once the hub answered.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect((await api.get('/v1/models/instances')).body.map((i: { model_uid: string }) => i.model_uid)).not.toContain('slow-cancel');
      expect((await api.get('/v1/models/instances')).body.map((i: { model_uid: string }) => i.model_uid)).not.toContain('slow-delete');
    } finally {
      slow.process.kill();
    }
  }, 120_000);

  it('launches by hub id from the CLI (the id as its first argument) and an embedding model by id', async () => {
    const launched = await runCli(['launch', 'hf.co/test-org/tiny-GGUF:Q8_0', '-u', 'from-cli', '-e', server.url, '--json'], { env: {} });
    expect(launched.code, launched.stderr).toBe(0);
    expect(JSON.parse(launched.stdout)).toEqual({ model_uid: 'from-cli' });
    expect((await api.delete('/v1/models/from-cli')).status).toBe(200);

    const embedder = await api.post('/v1/models', { model_name: 'hf.co/test-org/tiny-embedder', model_type: 'embedding', model_uid: 'emb' });
    expect(embedder.status, embedder.text).toBe(200);
    const record = (await api.get('/v1/model_registrations/embedding/test-org--tiny-embedder')).body;
    expect(record).toMatchObject({ dimensions: tinyEmbedder().dimensions, model_specs: [{ model_format: 'pytorch', model_id: 'test-org/tiny-embedder' }] });
    const vectors = await api.post('/v1/embeddings', { model: 'emb', input: ['a hub model'] });
    expect(vectors.status, vectors.text).toBe(200);
    expect(vectors.body.data[0].embedding).toHaveLength(tinyEmbedder().dimensions);
    expect((await api.delete('/v1/models/emb')).status).toBe(200);
  }, 120_000);

  it('searches the hub: downloads, sizes per quantization, the memory estimate and whether it fits the budget', async () => {
    const found = await api.get('/v1/hub/models?search=tiny');
    expect(found.status, found.text).toBe(200);
    expect(found.body.hub).toBe(hub.url);
    const ids = found.body.data.map((r: { id: string }) => r.id);
    expect(ids).toEqual(['test-org/tiny-GGUF', 'test-org/tiny-embedder', 'test-org/tiny-llm']); // by downloads
    const gguf = found.body.data[0];
    // No 4-bit one: Q8_0, not f32 (the first by name, and the largest).
    expect(gguf).toMatchObject({ model_name: 'hf.co/test-org/tiny-GGUF', downloads: 1200, default_quantization: 'q8_0' });
    const q8 = gguf.gguf.find((q: { quantization: string }) => q.quantization === 'q8_0');
    expect(q8.files).toEqual(['tiny-q8_0.gguf']);
    expect(q8.bytes).toBeGreaterThan(100_000);
    expect(q8.memory_estimate).toBeGreaterThan(q8.bytes);
    expect(q8).toMatchObject({ fits: true, fits_now: true });
    const torch = found.body.data[2];
    expect(torch.gguf).toEqual([]);
    expect(torch.parameters).toBeGreaterThan(0);
    expect(torch.pytorch.bytes).toBeGreaterThan(0);
    // Sized as the launch would be: float32 weights on a CPU host, and the runtime's own memory.
    expect(torch.pytorch.memory_estimate).toBeGreaterThan(torch.parameters * 4);
    expect(torch.pytorch.fits).toBe(true);

    const onlyGguf = await api.get('/v1/hub/models?search=TINY&format=gguf&limit=5');
    expect(onlyGguf.body.data.map((r: { id: string }) => r.id)).toEqual(['test-org/tiny-GGUF']);
    expect(hub.asked.some((l) => l.startsWith('GET /api/models?') && l.includes('filter=gguf') && l.includes('limit=5'))).toBe(true);
    for (const bad of ['limit=0', 'limit=51', 'format=onnx', 'task=Text%20Generation', `search=${'x'.repeat(201)}`]) {
      const refused = await api.get(`/v1/hub/models?${bad}`);
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.param, bad).toBe(bad.split('=')[0]);
    }
  }, 60_000);

  it('answers a search with 503 naming the hub once the hub is gone', async () => {
    hub.process.kill();
    await new Promise((resolve) => hub.process.once('exit', resolve));
    const down = await api.get('/v1/hub/models?search=tiny');
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('hub_unreachable');
    expect(down.body.error.message).toContain(hub.url);
    // A model registered from the hub launches again without it (its registration and cache are here).
    const again = await api.post('/v1/models', { model_name: 'hf.co/test-org/tiny-GGUF:q8_0', model_uid: 'offline' });
    expect(again.status, again.text).toBe(200);
  }, 60_000);
});
