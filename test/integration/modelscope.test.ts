import { stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { startStandin, type Standin } from './harness/hub-standins.js';
import { tinyGguf, tinyLlm } from './harness/tiny-models.js';

const spec = (hub: string, extra: Record<string, unknown> = {}) => ({ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_id: 'test-org/tiny-llm', model_hub: hub, ...extra });

/**
 * ModelScope as a second hub (docs/registry.md, "The hubs"): `download_hub: modelscope`
 * downloads through ModelScope's HTTP API for the Transformers engine (Python) and the
 * llama.cpp engine (Node), resumes a cut file, asks the Hugging Face hub nothing, and
 * serves from the cache once ModelScope is gone.
 */
describe('downloads from ModelScope', () => {
  let hf: Standin;
  let ms: Standin;
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    const repos = { 'test-org/tiny-llm': tinyLlm().path, 'test-org/tiny-GGUF': path.dirname(tinyGguf().files.q8_0!) };
    hf = await startStandin('hub_standin.py', repos);
    ms = await startStandin('modelscope_standin.py', repos, ['--cut-once', 'model.safetensors:65536']);
    server = await startServer({ home: await makeHome('hangar-modelscope-'), env: { HF_HUB_OFFLINE: '', TRANSFORMERS_OFFLINE: '', HF_ENDPOINT: hf.url, HANGAR_MODELSCOPE_ENDPOINT: ms.url } });
    api = client(server.url);
    const llm = { version: 2, model_name: 'two-hubs', model_family: 'qwen2.5-instruct', model_lang: ['en'], model_ability: ['chat', 'generate'], context_length: 512, model_specs: [spec('huggingface'), spec('modelscope')] };
    const gguf = {
      version: 2, model_name: 'two-hubs-gguf', model_family: 'qwen2.5-instruct', model_lang: ['en'], model_ability: ['chat', 'generate'], context_length: 512,
      model_specs: ['huggingface', 'modelscope'].map((hub) => ({ model_format: 'ggufv2', model_size_in_billions: 1, quantization: 'q8_0', model_id: 'test-org/tiny-GGUF', model_hub: hub, model_file_name_template: 'tiny-{quantization}.gguf' })),
    };
    for (const model of [llm, gguf]) expect((await api.post('/v1/model_registrations/LLM', { model, persist: true })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    hf?.process.kill();
    ms?.process.kill();
    await server?.stop().catch(() => {});
    if (server) await removeHome(server.home);
  });

  it('downloads a transformers model from ModelScope, resuming a cut file, and the Hugging Face hub is not asked', async () => {
    const launch = { model_name: 'two-hubs', model_engine: 'Transformers', download_hub: 'modelscope', model_uid: 'ms-tf' };
    // The cut is asked again from where it stopped, within the launch.
    const launched = await api.post('/v1/models', launch);
    expect(launched.status, launched.text).toBe(200);
    const done = await api.post('/v1/completions', { model: 'ms-tf', prompt: 'Hi', max_tokens: 3 });
    expect(done.status, done.text).toBe(200);
    const resumed = ms.asked.filter((l) => l.includes('FilePath=model.safetensors'));
    expect(resumed.at(-1)).toMatch(/range=bytes=\d+-$/);
    expect(ms.asked.some((l) => l.startsWith('GET /api/v1/models/test-org/tiny-llm/repo/files?Revision=master'))).toBe(true);
    expect(hf.asked.filter((l) => l.includes('tiny-llm'))).toEqual([]);
    const folder = path.join(server.home, 'cache', 'modelscope', 'models', 'test-org', 'tiny-llm');
    expect((await stat(path.join(folder, 'model.safetensors'))).size).toBeGreaterThan(65536);
    const description = (await api.get('/v1/models/ms-tf')).body;
    expect(JSON.stringify(description)).toContain('modelscope');
  }, 180_000);

  it('downloads a GGUF file from ModelScope for the llama.cpp engine', async () => {
    const launched = await api.post('/v1/models', { model_name: 'two-hubs-gguf', model_engine: 'llama.cpp', quantization: 'q8_0', download_hub: 'modelscope', model_uid: 'ms-gg' });
    expect(launched.status, launched.text).toBe(200);
    const chat = await api.post('/v1/chat/completions', { model: 'ms-gg', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3 });
    expect(chat.status, chat.text).toBe(200);
    expect(ms.asked.some((l) => l.startsWith('GET /api/v1/models/test-org/tiny-GGUF/repo?') && l.includes('FilePath=tiny-q8_0.gguf'))).toBe(true);
    expect(hf.asked.filter((l) => l.includes('tiny-GGUF'))).toEqual([]);
  }, 120_000);

  it('launches both again from the cache with ModelScope gone, and refuses hubs it cannot download from', async () => {
    for (const uid of ['ms-tf', 'ms-gg']) expect((await api.delete(`/v1/models/${uid}`)).status).toBe(200);
    ms.process.kill();
    await new Promise((resolve) => ms.process.once('exit', resolve));
    const tf = await api.post('/v1/models', { model_name: 'two-hubs', model_engine: 'Transformers', download_hub: 'modelscope', model_uid: 'ms-tf' });
    expect(tf.status, tf.text).toBe(200);
    const gg = await api.post('/v1/models', { model_name: 'two-hubs-gguf', model_engine: 'llama.cpp', quantization: 'q8_0', download_hub: 'modelscope', model_uid: 'ms-gg' });
    expect(gg.status, gg.text).toBe(200);
    const csg = await api.post('/v1/models', { model_name: 'two-hubs', model_engine: 'Transformers', download_hub: 'csghub' });
    expect(csg.status).toBe(400);
    expect(csg.body.error.param).toBe('download_hub');
    expect(hf.asked.filter((l) => l.includes('tiny-llm') || l.includes('tiny-GGUF'))).toEqual([]);
  }, 120_000);
});
