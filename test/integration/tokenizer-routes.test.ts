import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { client } from './harness/http.js';
import { venvPython } from './harness/server.js';
import { tinyLlm } from './harness/tiny-models.js';

// vLLM's tokenizer routes (/tokenize, /detokenize, /tokenizer_info) on the shared
// server's `tiny` (Transformers) and `lc` (the same weights as GGUF on llama.cpp),
// checked against the model's own tokenizer in Python.
describe("vLLM's tokenizer routes", () => {
  const server = { url: inject('sharedServerUrl') };
  const api = client(server.url);
  const tiny = tinyLlm();
  const text = 'The quick brown fox jumps over the lazy dog';
  let reference: { ids: number[]; plain: number[]; pieces: string[]; decoded: string; eos: string; bos: string };

  beforeAll(() => {
    const script = `
import json, sys
from transformers import AutoTokenizer
t = AutoTokenizer.from_pretrained(sys.argv[1])
ids = t(sys.argv[2])["input_ids"]
plain = t(sys.argv[2], add_special_tokens=False)["input_ids"]
print(json.dumps({"ids": ids, "plain": plain, "pieces": t.convert_ids_to_tokens(plain), "decoded": t.decode(ids), "eos": t.eos_token, "bos": t.bos_token}))`;
    reference = JSON.parse(execFileSync(venvPython, ['-c', script, tiny.path, text], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop()!);
  });

  it.each(['tiny', 'lc'])('tokenizes and detokenizes as the model\'s tokenizer on %s', async (model) => {
    const res = await api.post('/tokenize', { model, prompt: text });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ count: reference.ids.length, tokens: reference.ids, token_strs: null });
    expect(res.body.max_model_len).toBeGreaterThan(0);
    // lm-evaluation-harness's remote tokenizer asks without special tokens.
    const plain = await api.post('/tokenize', { model, prompt: text, add_special_tokens: false, return_token_strs: true });
    expect(plain.body.tokens).toEqual(reference.plain);
    expect(plain.body.token_strs).toEqual(reference.pieces);
    const back = await api.post('/detokenize', { model, tokens: reference.ids });
    expect(back.body).toEqual({ prompt: reference.decoded });
    const info = await api.get(`/tokenizer_info?model=${model}`);
    expect(info.body).toMatchObject({ eos_token: reference.eos, bos_token: reference.bos, model_max_length: res.body.max_model_len });
  });

  it('tokenizes a text longer than the context, as vLLM counts long documents', async () => {
    const long = `${text} `.repeat(120);
    for (const model of ['tiny', 'lc']) {
      const res = await api.post('/tokenize', { model, prompt: long });
      expect(res.status, res.text).toBe(200);
      expect(res.body.count).toBeGreaterThan(res.body.max_model_len);
    }
    // As a prompt of token ids, that many is refused by its length.
    const ids = (await api.post('/tokenize', { model: 'tiny', prompt: long })).body.tokens;
    for (const model of ['tiny', 'lc']) {
      const res = await api.post('/v1/completions', { model, prompt: ids, max_tokens: 1 });
      expect([res.status, res.body.error.message], model).toEqual([400, expect.stringContaining('leaves no room')]);
    }
    // As a chat it is refused on both engines, as count_tokens and the chat route refuse it.
    for (const model of ['tiny', 'lc']) {
      const res = await api.post('/tokenize', { model, messages: [{ role: 'user', content: long }] });
      expect([res.status, res.body.error?.message], model).toEqual([400, expect.stringContaining('leaves no room')]);
    }
  });

  it('tokenizes chat messages as the chat route counts them', async () => {
    const messages = [{ role: 'user', content: 'Hello there, how are you?' }];
    for (const model of ['tiny', 'lc']) {
      const tokens = await api.post('/tokenize', { model, messages });
      const counted = await api.post('/v1/messages/count_tokens', { model, messages });
      expect(tokens.body.count, model).toBe(counted.body.input_tokens);
    }
  });

  it('refuses what it cannot answer, naming the field', async () => {
    const refusal = async (method: 'post' | 'get', url: string, body?: unknown): Promise<[number, string, string | null]> => {
      const res = method === 'post' ? await api.post(url, body) : await api.get(url);
      return [res.status, res.body.error.code, res.body.error.param];
    };
    // Several LLMs run here: a request without `model` must name one.
    expect(await refusal('post', '/tokenize', { prompt: text })).toEqual([400, 'invalid_field', 'model']);
    expect(await refusal('get', '/tokenizer_info')).toEqual([400, 'invalid_field', 'model']);
    expect(await refusal('post', '/tokenize', { model: 'absent', prompt: text })).toEqual([404, 'model_not_found', 'model']);
    for (const model of ['tiny', 'lc']) {
      expect(await refusal('post', '/detokenize', { model, tokens: [1, tiny.vocab_size] })).toEqual([400, 'inference_invalid_input', 'tokens']);
      expect(await refusal('post', '/tokenize', { model, messages: [{ role: 'user', content: 'x' }], add_special_tokens: true })).toEqual([400, 'inference_invalid_input', 'add_special_tokens']);
    }
    expect(await refusal('post', '/detokenize', { model: 'tiny', tokens: [1, -1] })).toEqual([400, 'invalid_field', 'tokens.1']);
    expect(await refusal('post', '/tokenize', { model: 'tiny', prompt: text, messages: [{ role: 'user', content: 'x' }] })).toEqual([400, 'invalid_field', 'messages']);
    // vLLM's other fields are refused by name, not ignored.
    for (const [field, value] of [['chat_template', '{{ x }}'], ['mm_processor_kwargs', {}]] as const) {
      expect(await refusal('post', '/tokenize', { model: 'tiny', messages: [{ role: 'user', content: 'x' }], [field]: value }), field).toEqual([400, 'invalid_field', field]);
    }
    // Where the prompt ends, as vLLM's /tokenize takes it: the turn opened (default), none opened, the last message continued.
    for (const model of ['tiny', 'lc']) {
      const user = [{ role: 'user', content: 'x' }];
      const counts = await Promise.all([{}, { add_generation_prompt: false }, { continue_final_message: true }].map(async (ending) => (await api.post('/tokenize', { model, messages: user, ...ending })).body.count as number));
      expect(counts[1], model).toBeLessThan(counts[0]!);
      expect(counts[2], model).toBeLessThan(counts[1]!);
    }
    expect(await refusal('post', '/tokenize', { model: 'tiny', messages: [{ role: 'user', content: 'x' }], add_generation_prompt: true, continue_final_message: true })).toEqual([400, 'invalid_field', 'continue_final_message']);
    // Messages are checked as the chat route checks them.
    expect(await refusal('post', '/tokenize', { model: 'tiny', messages: [{ role: 'bogus', content: 'x' }] })).toEqual([400, 'invalid_field', 'messages.0.role']);
    expect(await refusal('post', '/tokenize', { model: 'tiny', messages: [] })).toEqual([400, 'invalid_field', 'messages']);
    const image = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }];
    expect(await refusal('post', '/tokenize', { model: 'tiny', messages: image })).toEqual([400, 'ability_missing', 'messages']);
    expect((await refusal('post', '/tokenize', { model: 'tiny', prompt: 5 }))[0]).toBe(400);
    // The simulator has no tokenizer: its engine says so.
    expect(await refusal('post', '/tokenize', { model: 'sim', prompt: text })).toEqual([400, 'inference_invalid_input', null]);
    // Named for the client: the model and its engine, not the runtime's method table alone.
    expect((await api.post('/tokenize', { model: 'sim', prompt: text })).body.error.message).toMatch(/^model sim \(engine simulator\) cannot answer this: its engine has no method 'tokenize'/);
  });
});
