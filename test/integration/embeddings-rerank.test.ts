import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { makeHome, removeHome, startServer, venvPython, type TestServer } from './harness/server.js';
import { tinyModel } from './harness/tiny-models.js';

interface TinyEncoder {
  path: string;
  dimensions: number;
  max_tokens: number;
}

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

// Tiny real BERTs (trained WordPiece vocabulary, random weights) as a sentence-transformers
// embedder and as a cross-encoder, served by the sentence_transformers engine.
describe('embeddings and rerank', () => {
  let server: TestServer;
  let work: string;
  let api: ReturnType<typeof client>;
  let embedder: TinyEncoder;

  beforeAll(async () => {
    work = await makeHome('hangar-enc-');
    embedder = tinyModel<TinyEncoder>('embedder');
    const cross = tinyModel<TinyEncoder>('cross-encoder');
    server = await startServer();
    api = client(server.url);
    const spec = (uri: string) => [{ model_format: 'pytorch', quantization: 'none', model_uri: uri }];
    expect((await api.post('/v1/model_registrations/embedding', { model: { model_name: 'tiny-embed', dimensions: embedder.dimensions, max_tokens: embedder.max_tokens, language: ['en'], model_specs: spec(embedder.path) }, persist: false })).status).toBe(200);
    expect((await api.post('/v1/model_registrations/rerank', { model: { model_name: 'tiny-rerank', type: 'normal', max_tokens: cross.max_tokens, language: ['en'], model_specs: spec(cross.path) }, persist: false })).status).toBe(200);
    const e = await api.post('/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'embed' });
    expect(e.status, e.text).toBe(200);
    const r = await api.post('/v1/models', { model_name: 'tiny-rerank', model_type: 'rerank', model_uid: 'rerank' });
    expect(r.status, r.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await removeHome(server.home);
    await removeHome(work);
  });

  it('embeds strings with the right count, dimension and unit norm, and counts tokens', async () => {
    const res = await api.post('/v1/embeddings', { model: 'embed', input: ['the quick brown fox', 'a lazy dog sleeps', 'hello'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.model_replica).toBe('embed-0');
    expect(res.body.data).toHaveLength(3);
    for (const item of res.body.data) {
      expect(item.embedding).toHaveLength(embedder.dimensions);
      expect(norm(item.embedding)).toBeCloseTo(1, 4);
    }
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(3);
    const single = await api.post('/v1/embeddings', { model: 'embed', input: 'hello' });
    expect(single.body.data).toHaveLength(1);
  });

  it('gives identical vectors inside and outside a batch', async () => {
    const alone = (await api.post('/v1/embeddings', { model: 'embed', input: 'the quick brown fox' })).body.data[0].embedding as number[];
    const crowd = await Promise.all(
      Array.from({ length: 12 }, (_, i) => api.post('/v1/embeddings', { model: 'embed', input: i % 3 === 0 ? 'the quick brown fox' : `other words number ${i}` })),
    );
    for (let i = 0; i < crowd.length; i += 3) {
      const v = crowd[i]!.body.data[0].embedding as number[];
      v.forEach((x, j) => expect(x).toBeCloseTo(alone[j]!, 5));
    }
  });

  it('serves a lone request without waiting for its batching window', async () => {
    // A 10 s window (the most allowed): a lone request that waited for company would run into the signal's 6 s.
    const slow = await api.post('/v1/models', { model_name: 'tiny-embed', model_type: 'embedding', model_uid: 'embed-wide-window', batch_window_ms: 10_000 });
    expect(slow.status, slow.text).toBe(200);
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${server.url}/v1/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'embed-wide-window', input: `lone request ${i}` }),
          signal: AbortSignal.timeout(6_000),
        });
        expect(res.status).toBe(200);
      }
    } finally {
      await api.delete('/v1/models/embed-wide-window');
    }
  });

  it('truncates to the asked dimensions and encodes base64 as OpenAI does', async () => {
    const dims = Math.floor(embedder.dimensions / 2);
    const cut = await api.post('/v1/embeddings', { model: 'embed', input: 'hello', dimensions: dims });
    expect(cut.body.data[0].embedding).toHaveLength(dims);
    // Beyond the model's size: a 400 that names the field (issue 31, item 6).
    const over = await api.post('/v1/embeddings', { model: 'embed', input: 'hello', dimensions: embedder.dimensions + 1 });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'inference_invalid_input', param: 'dimensions' });
    const b64 = await api.post('/v1/embeddings', { model: 'embed', input: 'hello', encoding_format: 'base64' });
    // Copied into a fresh buffer: a small Buffer lives inside Node's shared pool.
    const floats = new Float32Array(new Uint8Array(Buffer.from(b64.body.data[0].embedding, 'base64')).buffer);
    const plain = (await api.post('/v1/embeddings', { model: 'embed', input: 'hello' })).body.data[0].embedding as number[];
    expect(floats.length).toBe(plain.length);
    floats.forEach((x, j) => expect(x).toBeCloseTo(plain[j]!, 5));
  });

  it('truncates an over-long input by default and refuses it with truncate: false', async () => {
    const long = 'word '.repeat(embedder.max_tokens * 2);
    expect((await api.post('/v1/embeddings', { model: 'embed', input: long })).status).toBe(200);
    const refused = await api.post('/v1/embeddings', { model: 'embed', input: ['fine', long], truncate: false });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/1/);
  });

  it('reranks in score order with top_n and documents', async () => {
    const documents = ['a fox in the forest', 'stock market news', 'the quick brown fox jumps', 'recipes for bread'];
    const all = await api.post('/v1/rerank', { model: 'rerank', query: 'quick fox', documents, return_documents: true, return_len: true });
    expect(all.status, all.text).toBe(200);
    const scores = all.body.results.map((r: any) => r.relevance_score);
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));
    expect(all.body.results.map((r: any) => r.index).sort()).toEqual([0, 1, 2, 3]);
    for (const r of all.body.results) expect(r.document).toEqual({ text: documents[r.index] });
    expect(all.body.meta.tokens.input_tokens).toBeGreaterThan(0);
    // Cohere's fields that would change the scores are refused by name, not dropped.
    for (const [field, value] of [['max_tokens_per_doc', 2], ['rank_fields', ['title']]] as const) {
      const refused = await api.post('/v2/rerank', { model: 'rerank', query: 'quick fox', documents, [field]: value });
      expect([refused.status, refused.body.error?.code, refused.body.error?.param], refused.text).toEqual([400, 'field_unsupported', field]);
    }
    // vLLM's and Jina's fields too: the model and the tokens read, whether or not return_len asks.
    expect(all.body).toMatchObject({ model: 'rerank', usage: { total_tokens: all.body.meta.tokens.input_tokens } });
    const top = await api.post('/v1/rerank', { model: 'rerank', query: 'quick fox', documents, top_n: 2 });
    expect(top.body.results).toHaveLength(2);
    expect(top.body.results.map((r: any) => r.index)).toEqual(all.body.results.slice(0, 2).map((r: any) => r.index));
    expect(top.body.results[0].document).toBeNull();
    // Jina's and Cohere's (v1) clients send documents as {"text": ...}; Cohere's v2 client posts to /v2/rerank.
    const objects = await api.post('/v2/rerank', { model: 'rerank', query: 'quick fox', documents: documents.map((text) => ({ text })), return_documents: true });
    expect(objects.status, objects.text).toBe(200);
    expect(objects.body.results.map((r: any) => [r.index, r.relevance_score, r.document])).toEqual(all.body.results.map((r: any) => [r.index, r.relevance_score, r.document]));
    // Xinference's engine arguments, a JSON object in a string: checked, and an argument the engine does not take is named, not dropped.
    const notJson = await api.post('/v1/rerank', { model: 'rerank', query: 'q', documents, kwargs: '[1, 2]' });
    expect([notJson.status, notJson.body.error?.code, notJson.body.error?.param]).toEqual([400, 'invalid_field', 'kwargs']);
    const unknown = await api.post('/v1/rerank', { model: 'rerank', query: 'q', documents, kwargs: '{"instruction": "rank recipes"}' });
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body.error.message).toContain('instruction');
    const truncating = await api.post('/v1/rerank', { model: 'rerank', query: 'quick fox', documents, kwargs: '{"truncate": false}' });
    expect(truncating.body.results.map((r: any) => r.relevance_score)).toEqual(scores);
    const odd = await api.post('/v1/rerank', { model: 'rerank', query: 'q', documents: ['a', { title: 'b' }] });
    expect(odd.body.error).toMatchObject({ code: 'invalid_field', param: 'documents.1.text' });
  });

  it('names what is wrong with a list input: mixed kinds, ids that are not ids, ids from another tokenizer', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [[1, 2, 'a'], 'input.2', /mixes kinds: item 0 is a token id, item 2 a string/],
      [[1.5], 'input.0', /whole numbers from 0, got 1.5/],
      [[[1, 2], [3, -1]], 'input.1.1', /whole numbers from 0, got -1/],
      // tiktoken's ids (what LangChain's OpenAIEmbeddings sends by default) past this model's vocabulary.
      [[15339, 1917], 'input', /outside the model's vocabulary .* check_embedding_ctx_length=False/],
    ];
    for (const [input, param, message] of cases) {
      const res = await api.post('/v1/embeddings', { model: 'embed', input });
      expect([res.status, res.body.error.param], JSON.stringify(input)).toEqual([400, param]);
      expect(res.body.detail, JSON.stringify(input)).toMatch(message);
    }
  });

  it('refuses embeddings on a rerank model and rerank on an embedding model, naming them', async () => {
    const wrong = await api.post('/v1/embeddings', { model: 'rerank', input: 'x' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toContain('rerank');
    const wrong2 = await api.post('/v1/rerank', { model: 'embed', query: 'x', documents: ['y'] });
    expect(wrong2.status).toBe(400);
    expect(wrong2.body.detail).toContain('embed');
  });

  it('converts token ids to the model tokens (/v1/convert_ids_to_tokens), one list or several', async () => {
    // The ids of a text, read back through the same tokenizer: the tokens spell the words.
    const one = await api.post('/v1/convert_ids_to_tokens', { model: 'embed', input: [1, 2, 3] });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toHaveLength(3);
    expect(one.body.every((t: unknown) => typeof t === 'string')).toBe(true);
    const two = await api.post('/v1/convert_ids_to_tokens', { model: 'embed', input: [[1, 2], [3]] });
    expect(two.body).toEqual([one.body.slice(0, 2), one.body.slice(2)]);
    const outside = await api.post('/v1/convert_ids_to_tokens', { model: 'embed', input: [99999999] });
    expect(outside.status).toBe(400);
    expect(outside.body.error.message).toContain('outside this model');
    expect((await api.post('/v1/convert_ids_to_tokens', { model: 'embed', input: ['a'] })).status).toBe(400);
    expect((await api.post('/v1/convert_ids_to_tokens', { model: 'rerank', input: [1] })).status).toBe(400);
  });

  it('works with the OpenAI JavaScript and Python SDKs', async () => {
    const sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const js = await sdk.embeddings.create({ model: 'embed', input: ['hello', 'world'] });
    expect(js.data).toHaveLength(2);
    expect(js.data[0]!.embedding).toHaveLength(embedder.dimensions);
    const script = `
import json, sys
from openai import OpenAI
c = OpenAI(base_url=sys.argv[1] + "/v1", api_key="none", max_retries=0)
r = c.embeddings.create(model="embed", input=["hello", "world"])
print(json.dumps({"n": len(r.data), "dim": len(r.data[0].embedding)}))
`;
    const py = JSON.parse(execFileSync(venvPython, ['-c', script, server.url], { encoding: 'utf8', timeout: 60_000 }).trim().split('\n').pop()!);
    expect(py).toEqual({ n: 2, dim: embedder.dimensions });
  });
});
