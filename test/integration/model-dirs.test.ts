import { existsSync, readdirSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, repoRoot, startServer, type TestServer } from './harness/server.js';
import { copyTinyModel, tinyModel } from './harness/tiny-models.js';

/** --model-dirs: local models only from the folders a secure deployment names (issue 20). */
describe('--model-dirs (real server)', () => {
  let server: TestServer;
  let work: string;
  let inside: string;
  let outside: string;
  let embedder: { path: string; dimensions: number; max_tokens: number };
  const registration = (name: string, uri: string) => ({
    model: { model_name: name, dimensions: embedder.dimensions, max_tokens: embedder.max_tokens, language: ['en'], model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: uri }] },
    persist: true,
  });

  beforeAll(async () => {
    work = await makeHome('hangar-modeldirs-');
    inside = path.join(work, 'models');
    outside = path.join(work, 'elsewhere');
    await mkdir(inside);
    await mkdir(outside);
    const cached = tinyModel<{ path: string; dimensions: number; max_tokens: number }>('embedder');
    embedder = await copyTinyModel(cached, path.join(inside, 'embedder'));
    await copyTinyModel(cached, path.join(outside, 'embedder'));
    await symlink(path.join(outside, 'embedder'), path.join(inside, 'link-out'));
    server = await startServer({ args: ['--model-dirs', inside] });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it.each([
    ['an absolute path outside', () => path.join(outside, 'embedder')],
    ['a .. path out of it', () => path.join(inside, '..', 'elsewhere', 'embedder')],
    ['a link inside pointing out', () => path.join(inside, 'link-out')],
    ['a file:// URI outside', () => `file://${path.join(outside, 'embedder')}`],
  ])('refuses %s, naming the setting, and leaves no registration file', async (_what, uri) => {
    const res = await client(server.url).post('/v1/model_registrations/embedding', registration('refused', uri()));
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('model_dir_refused');
    expect(res.body.error.message).toContain('--model-dirs');
    const folder = path.join(server.home, 'model', 'v2', 'embedding');
    expect(existsSync(folder) ? readdirSync(folder).filter((f) => f.startsWith('refused')) : []).toEqual([]);
  });

  it('accepts a model inside (a file:// URI too), and launches it', async () => {
    const api = client(server.url);
    expect((await api.post('/v1/model_registrations/embedding', registration('in', embedder.path))).status).toBe(200);
    expect((await api.post('/v1/model_registrations/embedding', registration('in-uri', `file://${embedder.path}`))).status).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'in', model_type: 'embedding', model_uid: 'in' });
    expect(launch.status, launch.text).toBe(200);
  }, 60_000);

  it('launches a model_path given relative to the service\'s working folder', async () => {
    // The service runs in the repository; its runtimes start elsewhere, where the same
    // relative path named nothing and the load failed after the launch was accepted.
    const api = client(server.url);
    const relative = path.relative(repoRoot, embedder.path);
    expect(path.isAbsolute(relative)).toBe(false);
    const launch = await api.post('/v1/models', { model_name: 'in', model_type: 'embedding', model_uid: 'rel', model_path: relative });
    expect(launch.status, launch.text).toBe(200);
    const res = await api.post('/v1/embeddings', { model: 'rel', input: 'hello' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data[0].embedding).toHaveLength(embedder.dimensions);
  }, 60_000);

  it('refuses a launch model_path and an auto-register folder outside', async () => {
    const api = client(server.url);
    const launch = await api.post('/v1/models', { model_name: 'in', model_type: 'embedding', model_uid: 'out', model_path: path.join(outside, 'embedder') });
    expect(launch.status).toBe(400);
    expect(launch.body.error).toMatchObject({ code: 'model_dir_refused', param: 'model_path' });
    // A LoRA adapter is loaded from disk as a model is: held to the same folders, and
    // refused before anything is looked up there (a path that is not there says the same).
    for (const adapter of [path.join(outside, 'embedder'), '/etc/shadow', path.join(outside, 'no-such-adapter')]) {
      const lora = await api.post('/v1/models', { model_name: 'in', model_type: 'embedding', model_uid: 'lora-out', peft_model_config: { lora_list: [{ lora_name: 'a', local_path: adapter }] } });
      expect([lora.status, lora.body.error?.code, lora.body.error?.param], lora.text).toEqual([400, 'model_dir_refused', 'peft_model_config.lora_list.0.local_path']);
    }
    const auto = await api.post('/v1/models/llm/auto-register', { model_path: outside });
    expect(auto.body.error?.code).toBe('model_dir_refused');
  });
});
