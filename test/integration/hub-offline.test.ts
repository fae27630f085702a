import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { startStandin } from './harness/hub-standins.js';
import { tinyGguf, tinyLlm } from './harness/tiny-models.js';

// A download cut, past the launch's read of the GGUF header for its memory estimate.
const startHub = (repos: Record<string, string>, cutOnce: string[] = []) => startStandin('hub_standin.py', repos, cutOnce.flatMap((c) => ['--cut-download', c]));

const TF_MODEL = {
  version: 2, model_name: 'tiny-hub-tf', model_family: 'llama-2', model_lang: ['en'], model_ability: ['generate'], context_length: 512,
  model_specs: [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_id: 'test-org/tiny-llm', model_hub: 'huggingface' }],
};
const GGUF_MODEL = {
  version: 2, model_name: 'tiny-hub-gguf', model_family: 'qwen2.5-instruct', model_lang: ['en'], model_ability: ['generate'], context_length: 512,
  model_specs: [{ model_format: 'ggufv2', model_size_in_billions: 1, quantization: 'q8_0', model_id: 'test-org/tiny-GGUF', model_hub: 'huggingface', model_file_name_template: 'tiny-{quantization}.gguf' }],
};

/**
 * A model downloaded once launches and comes back after a restart with the hub gone
 * and with HF_HUB_OFFLINE=1, on the Transformers path and the GGUF path
 * (docs/on-demand.md, "The cache works offline").
 */
describe('the weights cache without the hub', () => {
  let home: string;
  const servers: TestServer[] = [];
  let hub: Awaited<ReturnType<typeof startHub>> | null = null;

  afterAll(async () => {
    hub?.process.kill();
    for (const server of servers) await server.stop().catch(() => {});
    if (home) await removeHome(home);
  });

  it('launches from the hub (a cut download resumed), then again with the hub gone, then restores with HF_HUB_OFFLINE=1', async () => {
    home = await makeHome('hangar-hub-offline-');
    // The hub drops the GGUF file's connection 64 KiB in, once.
    hub = await startHub({ 'test-org/tiny-llm': tinyLlm().path, 'test-org/tiny-GGUF': path.dirname(tinyGguf().files.q8_0!) }, ['tiny-q8_0.gguf:65536']);
    const online = await startServer({ home, env: { HF_HUB_OFFLINE: '', TRANSFORMERS_OFFLINE: '', HF_ENDPOINT: hub.url } });
    servers.push(online);
    let api = client(online.url);
    for (const model of [TF_MODEL, GGUF_MODEL]) {
      expect((await api.post('/v1/model_registrations/LLM', { model: JSON.stringify(model), persist: true })).status).toBe(200);
    }
    const launches = {
      tf: { model_name: 'tiny-hub-tf', model_engine: 'Transformers', model_uid: 'tf' },
      gg: { model_name: 'tiny-hub-gguf', model_engine: 'llama.cpp', quantization: 'q8_0', model_uid: 'gg' },
    };
    const serveBoth = async (): Promise<void> => {
      for (const uid of ['tf', 'gg']) {
        const done = await api.post('/v1/completions', { model: uid, prompt: 'Hi', max_tokens: 3 });
        expect(done.status, `${uid}: ${done.text}`).toBe(200);
      }
    };
    // The cut is asked again from where it stopped, within the launch.
    const cut = await api.post('/v1/models', launches.gg);
    expect(cut.status, cut.text).toBe(200);
    expect(hub.asked.filter((l) => l.startsWith('GET') && l.includes('tiny-q8_0.gguf')).at(-1)).toMatch(/range=bytes=65536-$/);
    for (const body of Object.values(launches)) {
      const launched = await api.post('/v1/models', body);
      expect(launched.status, launched.text).toBe(200);
    }
    await serveBoth();
    // Sized before the download from the hub's listing, not the catalog's "1B".
    for (const uid of ['tf', 'gg']) {
      const detail = (await api.get(`/v1/models/${uid}`)).body.memory_estimate_detail;
      expect(detail.basis, uid).toBe('hub');
      expect(detail.weights, uid).toBeLessThan(100e6);
    }
    // The second launch asked only for the rest of the file. (Before them, the first
    // launch's memory estimate read the GGUF's header: a bounded range from 0, once.)
    const asked = hub.asked.filter((l) => l.startsWith('GET /test-org/tiny-GGUF/resolve/main/tiny-q8_0.gguf'));
    expect(asked.filter((l) => /range=bytes=0-\d+$/.test(l))).toHaveLength(1);
    const ggufGets = asked.filter((l) => !/range=bytes=0-\d+$/.test(l));
    expect(ggufGets).toHaveLength(2);
    expect(ggufGets[0]).toMatch(/range=-$/);
    expect(ggufGets[1]).toMatch(/range=bytes=\d+-$/);
    expect(Number(/bytes=(\d+)-/.exec(ggufGets[1]!)![1])).toBeGreaterThan(0);
    expect(hub.asked.some((l) => l.startsWith('GET /test-org/tiny-llm/resolve/'))).toBe(true);
    expect(hub.asked.some((l) => l.startsWith('GET /test-org/tiny-GGUF/resolve/main/tiny-q8_0.gguf'))).toBe(true);
    const repo = path.join(home, 'cache', 'huggingface', 'models--test-org--tiny-llm');
    expect((await readFile(path.join(repo, 'refs', 'main'), 'utf8')).length).toBe(40);

    // The hub goes away: both launch again from the cache.
    for (const uid of ['tf', 'gg']) expect((await api.delete(`/v1/models/${uid}`)).status).toBe(200);
    hub.process.kill();
    await new Promise((resolve) => hub!.process.once('exit', resolve));
    for (const body of Object.values(launches)) {
      const launched = await api.post('/v1/models', body);
      expect(launched.status, launched.text).toBe(200);
    }
    await serveBoth();

    // A restart with HF_HUB_OFFLINE=1 (and nothing where the hub was) restores both.
    await online.stop();
    const offline = await startServer({ home, env: { HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', HF_ENDPOINT: hub.url } });
    servers.push(offline);
    api = client(offline.url);
    const ready = await waitFor(async () => {
      const records = (await api.get('/v1/models/instances')).body as Array<{ model_uid: string; status: string }>;
      return records.filter((r) => r.status === 'READY').length === 2;
    }, 90_000);
    expect(ready, JSON.stringify((await api.get('/v1/models/instances')).body)).toBe(true);
    await serveBoth();
  }, 240_000);

  it("never hands the service's HF token to a runtime whose launch names its own HF_ENDPOINT", async () => {
    // HF_* launch variables need no models:code power: without this, any launcher could
    // point a runtime at its own server and receive the service's token with the first download.
    const work = await makeHome('hangar-hub-token-');
    const launcher = path.join(work, 'env_launcher.py');
    await writeFile(launcher, 'import os\n\ndef load():\n    return None\n\ndef infer(model):\n    return {k: os.environ.get(k) for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT", "HANGAR_API_KEY")}\n');
    const server = await startServer({ env: { HF_TOKEN: 'service-secret', HUGGING_FACE_HUB_TOKEN: 'service-secret', HANGAR_API_KEY: 'sk-the-cli-credential' } });
    servers.push(server);
    const api = client(server.url);
    const definition = { model_name: 'env-reader', model_uri: launcher, launcher: 'python' };
    expect((await api.post('/v1/model_registrations/flexible', { model: JSON.stringify(definition), persist: false })).status).toBe(200);
    const seen = async (uid: string, envs: Record<string, string>): Promise<Record<string, string | null>> => {
      const launched = await api.post('/v1/models', { model_name: 'env-reader', model_type: 'flexible', model_uid: uid, envs });
      expect(launched.status, launched.text).toBe(200);
      const answer = await api.post('/v1/flexible/infers', { model: uid });
      expect(answer.status, answer.text).toBe(200);
      return answer.body;
    };
    expect(await seen('own-hub', { HF_ENDPOINT: 'http://127.0.0.1:9' })).toEqual({ HF_TOKEN: null, HUGGING_FACE_HUB_TOKEN: null, HF_ENDPOINT: 'http://127.0.0.1:9', HANGAR_API_KEY: null });
    expect(await seen('own-hub-own-token', { HF_ENDPOINT: 'http://127.0.0.1:9', HF_TOKEN: 'theirs' })).toMatchObject({ HF_TOKEN: 'theirs', HUGGING_FACE_HUB_TOKEN: null });
    // The service's own hub: its token, as before; never the CLI's credential.
    expect(await seen('service-hub', {})).toMatchObject({ HF_TOKEN: 'service-secret', HANGAR_API_KEY: null });
    await server.stop();
    await removeHome(server.home);
    await removeHome(work);
  }, 120_000);
});
