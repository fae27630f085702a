import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, startServer, type TestServer } from './harness/server.js';
import { tinyLora, tinyLlmRegistration } from './harness/tiny-models.js';

// Two LoRA adapters made with peft for the tiny Llama at test time, served by the
// Transformers engine through the real loading code (issue 30, LoRA on Transformers).
describe('LoRA adapters on the Transformers engine', () => {
  let work: string;
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let adapters: Record<'a' | 'b', string>;
  const prompt = 'Tell me a story about the robot';
  const solo: Record<string, string> = {};

  const complete = async (body: Record<string, unknown>): Promise<string> => {
    const res = await api.post('/v1/completions', { model: 'lora', prompt, max_tokens: 16, temperature: 0, ...body });
    expect(res.status, res.text).toBe(200);
    return res.body.choices[0].text as string;
  };

  beforeAll(async () => {
    work = await makeHome('hangar-lora-');
    const tiny = tinyLora();
    adapters = tiny.adapters;
    server = await startServer();
    api = client(server.url);
    const reg = tinyLlmRegistration('tiny-chat', tiny.path);
    expect((await api.post('/v1/model_registrations/LLM', { ...reg, persist: true })).status).toBe(200);
    const launch = await api.post('/v1/models', {
      model_name: 'tiny-chat',
      model_engine: 'Transformers',
      model_uid: 'lora',
      peft_model_config: { lora_list: [{ lora_name: 'a', local_path: adapters.a }, { lora_name: 'b', local_path: adapters.b }] },
    });
    expect(launch.status, launch.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    await removeHome(work);
  });

  it('lists each adapter as a model of its own, with its parent', async () => {
    const ids = (await api.get('/v1/models')).body.data.map((m: any) => [m.id, m.parent ?? null]);
    expect(ids).toEqual([['lora', null], ['lora:a', 'lora'], ['lora:b', 'lora']]);
    expect((await api.get('/v1/models/lora')).body.lora_names).toEqual(['a', 'b']);
  });

  it('answers with the adapter a request names, by lora_name or by model id, and with the base model otherwise', async () => {
    solo.base = await complete({});
    solo.a = await complete({ lora_name: 'a' });
    solo.b = await complete({ model: 'lora:b' });
    expect(new Set([solo.base, solo.a, solo.b]).size).toBe(3);
    expect(await complete({ model: 'lora:a' })).toBe(solo.a);
    expect(await complete({ lora_name: 'b' })).toBe(solo.b);
    const chat = await api.post('/v1/chat/completions', { model: 'lora:a', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, temperature: 0 });
    expect(chat.status, chat.text).toBe(200);
    // Anthropic's route answers with the same adapter, by id or lora_name (it was a 404, and lora_name was ignored).
    const messages = [{ role: 'user', content: 'Hi' }];
    for (const asked of [{ model: 'lora:a' }, { model: 'lora', lora_name: 'a' }]) {
      const message = await api.post('/v1/messages', { ...asked, messages, max_tokens: 4, temperature: 0 });
      expect([message.status, message.body.content?.[0]?.text], message.text).toEqual([200, chat.body.choices[0].message.content]);
    }
    const unknown = await api.post('/v1/messages', { model: 'lora', lora_name: 'zzz', messages, max_tokens: 4 });
    expect([unknown.status, unknown.body.error?.type], unknown.text).toEqual([400, 'invalid_request_error']);
    expect((await api.post('/v1/messages/count_tokens', { model: 'lora:b', messages })).status).toBe(200);
  });

  it('runs requests for different adapters and the base model in one batch, each answering as alone', async () => {
    const asked = ['base', 'a', 'b', 'a', 'base', 'b'] as const;
    const texts = await Promise.all(asked.map((which) => complete(which === 'base' ? {} : { lora_name: which })));
    expect(texts).toEqual(asked.map((which) => solo[which]));
  });

  it('refuses an adapter the model does not have, naming those it has', async () => {
    const res = await api.post('/v1/completions', { model: 'lora', prompt, max_tokens: 2, lora_name: 'c' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_field', param: 'lora_name' });
    expect(res.body.error.message).toContain('lora_name: c is not a LoRA adapter of model lora; its adapters: a, b');
    const conflicting = await api.post('/v1/completions', { model: 'lora:a', prompt, max_tokens: 2, lora_name: 'b' });
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.error.param).toBe('lora_name');
  });

  it('keeps its adapters across a restart', async () => {
    await server.stop();
    server = await startServer({ home: server.home });
    api = client(server.url);
    let ready = false;
    for (let i = 0; i < 120 && !ready; i++) {
      ready = (await api.get('/v1/models/instances?model_uid=lora')).body[0]?.status === 'READY';
      if (!ready) await new Promise((r) => setTimeout(r, 500));
    }
    expect(ready).toBe(true);
    expect(await complete({ model: 'lora:a' })).toBe(solo.a);
    expect(await complete({})).toBe(solo.base);
  }, 120_000);
});
