import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinCatalog } from '../../src/registry/builtin-catalog.js';
import { specsOf } from '../../src/registry/model-record.js';
import type { Registry } from '../../src/registry/registry.js';
import { environment, openRegistry, tempHome } from './fixtures.js';

const HUB_ID = /^[^/\s]+\/[^/\s]+$/;

let home: string;
let cleanup: () => Promise<void>;
let registry: Registry;

beforeAll(async () => {
  ({ home, cleanup } = await tempHome());
  ({ registry } = await openRegistry(home, environment(['torch', 'sentence_transformers'])));
});
afterAll(() => cleanup());

describe('built-in embedding and rerank families', () => {
  it('has at least 10 embedding and 4 rerank families, with unique names', async () => {
    const catalog = await loadBuiltinCatalog();
    expect(catalog.embedding.size).toBeGreaterThanOrEqual(10);
    expect(catalog.rerank.size).toBeGreaterThanOrEqual(4);
    const names = [...catalog.embedding.keys(), ...catalog.rerank.keys()];
    expect(new Set(names).size).toBe(names.length);
    for (const [name, record] of [...catalog.embedding, ...catalog.rerank]) expect(record.model_name).toBe(name);
  });

  it('gives every family a hub id of the form org/name and sound sizes and languages', async () => {
    const catalog = await loadBuiltinCatalog();
    for (const type of ['embedding', 'rerank'] as const) {
      for (const record of catalog[type].values()) {
        const r = record as unknown as { model_name: string; dimensions?: number; max_tokens: number | null; language: string[] };
        const ids = specsOf(record).map((s) => s.model_id);
        expect(ids.length, r.model_name).toBeGreaterThan(0);
        for (const id of ids) expect(id, r.model_name).toMatch(HUB_ID);
        expect(Number.isInteger(r.max_tokens) && r.max_tokens! > 0, `${r.model_name} max_tokens`).toBe(true);
        if (type === 'embedding') expect(Number.isInteger(r.dimensions) && r.dimensions! > 0, `${r.model_name} dimensions`).toBe(true);
        expect(r.language.length, r.model_name).toBeGreaterThan(0);
        for (const lang of r.language) expect(lang.length).toBeGreaterThan(0);
      }
    }
  });

  it('knows the sizes of well-known models', async () => {
    const catalog = await loadBuiltinCatalog();
    const emb = (name: string) => catalog.embedding.get(name) as unknown as { dimensions: number; max_tokens: number };
    expect(emb('bge-large-en-v1.5')).toMatchObject({ dimensions: 1024, max_tokens: 512 });
    expect(emb('bge-small-zh-v1.5')).toMatchObject({ dimensions: 512, max_tokens: 512 });
    expect(emb('bge-m3')).toMatchObject({ dimensions: 1024, max_tokens: 8192 });
    expect(emb('e5-small-v2')).toMatchObject({ dimensions: 384, max_tokens: 512 });
    expect(emb('multilingual-e5-large')).toMatchObject({ dimensions: 1024, max_tokens: 512 });
    expect(emb('all-mpnet-base-v2')).toMatchObject({ dimensions: 768, max_tokens: 384 });
    expect(emb('jina-embeddings-v2-small-en')).toMatchObject({ dimensions: 512, max_tokens: 8192 });
    expect(specsOf(catalog.rerank.get('jina-reranker-v2')!).map((s) => [s.model_hub, s.model_id])).toEqual([['huggingface', 'jinaai/jina-reranker-v2-base-multilingual'], ['modelscope', 'jinaai/jina-reranker-v2-base-multilingual']]);
    expect(catalog.rerank.get('bge-reranker-large')).toMatchObject({ type: 'normal', max_tokens: 512 });
  });

  it('offers sentence_transformers for every one when torch and sentence_transformers are installed', async () => {
    for (const type of ['embedding', 'rerank'] as const) {
      const items = await registry.list(type);
      const builtins = items.filter((i) => i.is_builtin);
      expect(builtins.length).toBeGreaterThanOrEqual(type === 'embedding' ? 10 : 4);
      for (const { model_name } of builtins) {
        const table = registry.engines(type, model_name);
        expect(table, model_name).not.toBeNull();
        expect(table!['sentence_transformers'], `${type} ${model_name}`).toEqual([{ model_name, model_format: 'pytorch', quantizations: ['none'] }]);
      }
    }
  });
});
