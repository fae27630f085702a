import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, repoRoot, startServer, venvPython, type TestServer } from './harness/server.js';
import { copyTinyModel, tinyLlm, type TinyLlm } from './harness/tiny-models.js';

/** POST /v1/models/llm/auto-register over a real save_pretrained folder, then a launch of what it built. */
describe('LLM auto-register (real server, tiny real Llama)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let work: string;
  let tiny: TinyLlm;

  beforeAll(async () => {
    work = await makeHome('hangar-autoreg-');
    // The folder's name is what the registration is named after.
    tiny = await copyTinyModel(tinyLlm(), path.join(work, 'My Tiny LLM'));
    server = await startServer();
    api = client(server.url);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('reads config, tokenizer and generation config into a registration to review', async () => {
    const res = await api.post('/v1/models/llm/auto-register', { model_path: tiny.path });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      version: 2,
      model_name: 'my-tiny-llm',
      model_family: 'llama',
      model_ability: ['chat', 'generate'],
      context_length: expect.any(Number),
      chat_template: expect.stringContaining('<|im_start|>'),
      stop_token_ids: [tiny.eos_token_id],
      stop: ['<|im_end|>'],
      model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: tiny.path, model_size_in_billions: 0.01 }],
    });
    // With a built-in family that parses tool calls, the template's tools count.
    const withFamily = await api.post('/v1/models/llm/auto-register', { model_path: tiny.path, model_family: 'qwen2.5-instruct' });
    expect(withFamily.body.model_ability).toEqual(['chat', 'generate', 'tools']);
    // The Python client's method builds the same.
    const py = execFileSync(venvPython, ['-c', 'import json, sys; from hangar_client import Client; print(json.dumps(Client(sys.argv[1]).build_llm_registration(sys.argv[2])))', server.url, tiny.path], {
      env: { ...process.env, PYTHONPATH: path.join(repoRoot, 'python-runtime') },
      encoding: 'utf8',
    });
    expect(JSON.parse(py)).toEqual({ ...res.body, model_description: expect.any(String) });
    // Only reviewed, not registered.
    expect((await api.get('/v1/model_registrations/LLM/my-tiny-llm')).status).toBe(404);
  });

  it('registers it at once with register: true, and the registration launches and chats', async () => {
    const res = await api.post('/v1/models/llm/auto-register', { model_path: tiny.path, model_name: 'auto-tiny', register: true });
    expect(res.status, res.text).toBe(200);
    expect((await api.get('/v1/model_registrations/LLM/auto-tiny')).status).toBe(200);
    const launch = await api.post('/v1/models', { model_name: 'auto-tiny', model_engine: 'Transformers', model_uid: 'auto' });
    expect(launch.status, launch.text).toBe(200);
    const chat = await api.post('/v1/chat/completions', { model: 'auto', messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 });
    expect(chat.status, chat.text).toBe(200);
    expect(chat.body.choices[0].message.role).toBe('assistant');
    expect((await api.post('/v1/models/llm/auto-register', { model_path: tiny.path, model_name: 'auto-tiny', register: true })).status).toBe(409);
  }, 120_000);

  it('names the field when the folder is missing or holds no config.json', async () => {
    const missing = await api.post('/v1/models/llm/auto-register', { model_path: path.join(work, 'nope') });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'model_path_not_found', param: 'model_path' });
    const empty = path.join(work, 'empty');
    await mkdir(empty);
    const noConfig = await api.post('/v1/models/llm/auto-register', { model_path: empty });
    expect(noConfig.status).toBe(400);
    expect(noConfig.body.error.message).toContain('config.json');
    expect((await api.post('/v1/models/llm/auto-register', {})).status).toBe(400);
  });
});
