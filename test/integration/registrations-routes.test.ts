import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';

describe('registration and engine routes over HTTP', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    const home = await makeHome();
    // A broken persisted file next to a good one: a warning, and the good one loads.
    const folder = path.join(home, 'model', 'v2', 'flexible');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'broken.json'), '{"model_name": "broken", ');
    await writeFile(path.join(folder, 'fine.json'), JSON.stringify({ model_name: 'fine', model_uri: home, launcher: 'python', launcher_args: '{}' }));
    server = await startServer({ home });
    api = client(server.url);
  });

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
  });

  it('loads good persisted files and warns about the broken one', async () => {
    const names = (await api.get('/v1/model_registrations/flexible')).body.map((r: any) => r.model_name);
    expect(names).toEqual(['fine']);
    expect(server.logs.some((l) => l.level === 40 && JSON.stringify(l).includes('broken.json'))).toBe(true);
  });

  it('lists built-ins sorted by lower-cased name, and details with cache status', async () => {
    const llms = (await api.get('/v1/model_registrations/LLM')).body as Array<{ model_name: string; is_builtin: boolean }>;
    const names = llms.map((r) => r.model_name);
    expect(names).toEqual([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
    expect(llms).toContainEqual({ model_name: 'qwen2.5-instruct', is_builtin: true });
    const detailed = (await api.get('/v1/model_registrations/embedding?detailed=true')).body as any[];
    const bge = detailed.find((r) => r.model_name === 'bge-small-en-v1.5');
    expect(bge).toMatchObject({ is_builtin: true, dimensions: 384 });
    expect(bge.model_specs[0]).toMatchObject({ model_id: 'BAAI/bge-small-en-v1.5', cache_status: false });
  });

  it('returns one flattened record', async () => {
    const qwen = (await api.get('/v1/model_registrations/LLM/qwen2.5-instruct')).body;
    expect(qwen.model_name).toBe('qwen2.5-instruct');
    const spec = qwen.model_specs.find((s: any) => s.model_id === 'Qwen/Qwen2.5-0.5B-Instruct');
    expect(spec).toMatchObject({ model_format: 'pytorch', model_size_in_billions: '0_5', quantization: 'none', model_hub: 'huggingface' });
  });

  it('says which engines can run a model here and why the others cannot', async () => {
    const engines = (await api.get('/v1/engines/qwen2.5-instruct')).body;
    // torch and transformers are in the runtime environment; vLLM never is on these machines.
    expect(Array.isArray(engines.Transformers)).toBe(true);
    expect(engines.Transformers[0]).toMatchObject({ model_name: 'qwen2.5-instruct', model_format: 'pytorch' });
    expect(typeof engines.vLLM).toBe('string');
    expect(engines.vLLM).toContain('vllm');
    expect((await api.get('/v1/engines/LLM/qwen2.5-instruct')).body).toEqual(engines);
    const flexible = (await api.get('/v1/engines/flexible/fine')).body;
    expect(Array.isArray(flexible.python)).toBe(true);
    expect((await api.get('/v1/engines/LLM/no-such-model')).body).toBeNull();
    const refused = await api.post('/v1/models', { model_name: 'qwen2.5-instruct', model_engine: 'vLLM' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('Model qwen2.5-instruct cannot be run on engine vLLM.');
    expect(refused.body.detail).toContain('vllm');
  });
});
