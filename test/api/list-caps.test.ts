import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_EMBEDDING_INPUTS } from '../../src/api/embeddings/schema.js';
import { MAX_RERANK_DOCUMENTS } from '../../src/api/rerank/schema.js';
import { buildTestApp } from './test-app.js';

/**
 * One request's lists are bounded before any runtime sees them: 2,048 embedding inputs
 * (OpenAI's cap) and 10,000 rerank documents (Cohere's). A body at the cap gets past the
 * check (to a 400 for the model no one launched); one item more is the field's 400.
 */
describe('the list caps of embeddings and rerank', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await buildTestApp(null));
  });
  afterAll(async () => {
    await close();
  });
  const post = async (url: string, body: unknown) => {
    const res = await app.inject({ method: 'POST', url, payload: body as object });
    return { status: res.statusCode, error: res.json().error as { code: string; param: string | null; message: string } };
  };
  const texts = (n: number) => Array.from({ length: n }, (_, i) => `text ${i}`);

  it('takes 2,048 embedding inputs of each list shape and refuses one more, naming the field and the count', async () => {
    expect(MAX_EMBEDDING_INPUTS).toBe(2048);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => [i + 1, i + 2]);
    for (const [name, make] of [['strings', texts], ['token-id lists', ids]] as const) {
      const at = await post('/v1/embeddings', { model: 'absent', input: make(MAX_EMBEDDING_INPUTS) });
      expect(at.error.code, name).toBe('model_not_found');
      const over = await post('/v1/embeddings', { model: 'absent', input: make(MAX_EMBEDDING_INPUTS + 1) });
      expect([over.status, over.error.code, over.error.param], name).toEqual([400, 'invalid_field', 'input']);
      expect(over.error.message, name).toBe('input: a list of at most 2048 items per request, got 2049: send the rest in further requests');
    }
  });

  it('counts a flat list of token ids as one input, whatever its length', async () => {
    const one = await post('/v1/embeddings', { model: 'absent', input: Array.from({ length: 5000 }, (_, i) => i) });
    expect(one.error.code).toBe('model_not_found');
  });

  it('takes 10,000 rerank documents and refuses one more', async () => {
    expect(MAX_RERANK_DOCUMENTS).toBe(10_000);
    const at = await post('/v1/rerank', { model: 'absent', query: 'q', documents: texts(MAX_RERANK_DOCUMENTS) });
    expect(at.error.code).toBe('model_not_found');
    const over = await post('/v1/rerank', { model: 'absent', query: 'q', documents: texts(MAX_RERANK_DOCUMENTS + 1) });
    expect([over.status, over.error.code, over.error.param]).toEqual([400, 'invalid_field', 'documents']);
    expect(over.error.message).toBe('documents: a list of at most 10000 items per request: rerank the rest in further requests');
  });
});
