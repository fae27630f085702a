import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/registry/registry.js';
import { expectHangarError, openRegistry, tempHome } from './fixtures.js';

let home: string;
let cleanup: () => Promise<void>;
let registry: Registry;

beforeAll(async () => {
  ({ home, cleanup } = await tempHome());
  ({ registry } = await openRegistry(home));
  const weights = path.join(home, 'emb');
  await mkdir(weights);
  const definition = { model_name: 'Aardvark-embed', dimensions: 8, max_tokens: 16, language: ['en'], model_specs: [{ model_format: 'pytorch', model_uri: weights }] };
  await registry.register('embedding', { model: JSON.stringify(definition) }, false);
  const gone = { ...definition, model_name: 'zz-gone', model_specs: [{ model_format: 'pytorch', model_id: 'org/not-downloaded' }] };
  await registry.register('embedding', { model: gone }, false);
  // What huggingface_hub leaves after downloading bge-small-en-v1.5 into <home>/cache/huggingface.
  const snapshot = path.join(home, 'cache', 'huggingface', 'hub', 'models--BAAI--bge-small-en-v1.5', 'snapshots', 'a'.repeat(40));
  await mkdir(snapshot, { recursive: true });
  await writeFile(path.join(snapshot, 'config.json'), '{}');
  // What a download that failed before its first file leaves: an empty snapshot, not a cached model.
  await mkdir(path.join(home, 'cache', 'huggingface', 'models--BAAI--bge-base-en-v1.5', 'snapshots', 'b'.repeat(40)), { recursive: true });
});
afterAll(() => cleanup());

describe('list', () => {
  it('sorts by lower-cased name and marks built-ins', async () => {
    const items = await registry.list('embedding');
    const names = items.map((i) => i.model_name);
    const lower = (n: string) => n.toLowerCase();
    expect(names).toEqual([...names].sort((a, b) => (lower(a) < lower(b) ? -1 : lower(a) > lower(b) ? 1 : a < b ? -1 : 1)));
    expect(names[0]).toBe('Aardvark-embed');
    expect(names.at(-1)).toBe('zz-gone');
    expect(names).toEqual(expect.arrayContaining(['bge-m3', 'Qwen3-Embedding-0.6B', 'embeddinggemma-300m', 'paraphrase-multilingual-MiniLM-L12-v2']));
    expect(items[0]).toEqual({ model_name: 'Aardvark-embed', is_builtin: false });
    expect(items[1]).toEqual({ model_name: 'all-MiniLM-L6-v2', is_builtin: true });
  });

  it('detailed: whole records with cache_status per spec', async () => {
    const items = await registry.list('embedding', { detailed: true });
    const byName = new Map(items.map((i) => [i.model_name, i as unknown as { model_specs: Array<{ cache_status: boolean }> }]));
    expect(byName.get('bge-small-en-v1.5')).toMatchObject({
      is_builtin: true,
      dimensions: 384,
      download_hubs: ['huggingface', 'modelscope'],
      // Cached from one hub: the other hub's spec is not.
      model_specs: [{ cache_status: true, model_hub: 'huggingface' }, { cache_status: false, model_hub: 'modelscope', model_id: 'Xorbits/bge-small-en-v1.5' }],
    });
    expect(byName.get('bge-base-en-v1.5')!.model_specs[0]!.cache_status).toBe(false);
    expect(byName.get('Aardvark-embed')!.model_specs[0]!.cache_status).toBe(true);
    expect(byName.get('zz-gone')!.model_specs[0]!.cache_status).toBe(false);
    const audio = await registry.list('audio', { detailed: true });
    const pocketsphinx = audio.find((i) => i.model_name === 'pocketsphinx-en-us') as unknown as { model_specs: Array<{ cache_status: boolean }>; download_hubs: string[] };
    expect(pocketsphinx.model_specs[0]!.cache_status).toBe(true);
    expect(pocketsphinx.download_hubs).toEqual([]);
  });

  it('detailed flexible items carry cache_status at the top', async () => {
    const file = path.join(home, 'm.joblib');
    await writeFile(file, 'x');
    await registry.register('flexible', { model: { model_name: 'flex', model_uri: file, launcher: 'sklearn' } }, false);
    expect(await registry.list('flexible', { detailed: true })).toEqual([
      expect.objectContaining({ model_name: 'flex', is_builtin: false, cache_status: true, launcher: 'sklearn' }),
    ]);
  });

  it('refuses an unknown type with 400', async () => {
    const err = await expectHangarError(() => registry.list('Embedding'), 'unsupported_model_type', 400);
    expect(err.message).toBe('Unsupported model type: Embedding');
  });
});

describe('get', () => {
  it('returns the flattened record, a copy', () => {
    const record = registry.get('LLM', 'qwen3') as { model_specs: Array<{ quantization: string; model_hub: string }> };
    // Every format, size, quantization and hub of Xinference's catalog (docs/catalog-sources.md).
    const count = record.model_specs.length;
    expect(count).toBeGreaterThan(400);
    expect(record.model_specs[0]).toMatchObject({ quantization: 'none', model_hub: 'huggingface' });
    record.model_specs.length = 0;
    expect((registry.get('LLM', 'qwen3') as { model_specs: unknown[] }).model_specs).toHaveLength(count);
  });

  it('answers 404 naming the model', async () => {
    const err = await expectHangarError(() => registry.get('LLM', 'never-there'), 'registration_not_found', 404);
    expect(err.message).toBe('Model never-there not found');
    await expectHangarError(() => registry.get('hologram', 'qwen3'), 'unsupported_model_type', 400);
  });
});
