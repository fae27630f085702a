import { describe, expect, it } from 'vitest';
import { loadBuiltinCatalog } from '../../src/registry/builtin-catalog.js';
import { flattenBuiltin } from '../../src/registry/flatten.js';
import { recordSchema, specsOf } from '../../src/registry/model-record.js';
import { MODEL_TYPES } from '../../src/registry/model-type.js';
import { candidateEngines } from '../../src/registry/engine-matching.js';
import type { TypedRecord } from '../../src/registry/model-record.js';

describe('built-in catalog', () => {
  it('loads at least 15 families over every type but flexible, with unique names', async () => {
    const catalog = await loadBuiltinCatalog();
    const names = MODEL_TYPES.flatMap((t) => [...catalog[t].keys()]);
    expect(names.length).toBeGreaterThanOrEqual(15);
    expect(new Set(names).size).toBe(names.length);
    for (const type of MODEL_TYPES) {
      if (type === 'flexible') expect(catalog[type].size).toBe(0);
      else expect(catalog[type].size, type).toBeGreaterThan(0);
    }
  });

  it('holds valid flattened records, each run by at least one known engine', async () => {
    const catalog = await loadBuiltinCatalog();
    for (const type of MODEL_TYPES) {
      for (const record of catalog[type].values()) {
        expect(() => recordSchema(type).parse(record), record.model_name).not.toThrow();
        expect(record).not.toHaveProperty('model_src');
        for (const spec of specsOf(record)) {
          expect(spec).not.toHaveProperty('model_src');
          expect(spec).not.toHaveProperty('quantizations');
          expect(typeof spec.quantization).toBe('string');
        }
        const engines = candidateEngines({ type, record } as TypedRecord);
        expect(engines.length, `${type} ${record.model_name} has no engine`).toBeGreaterThan(0);
      }
    }
  });

  it('has the real hub ids of the families the brief names', async () => {
    const catalog = await loadBuiltinCatalog();
    const ids = (type: (typeof MODEL_TYPES)[number], name: string) =>
      [...new Set(specsOf(catalog[type].get(name)!).filter((s) => s.model_hub === 'huggingface' && (s.model_format === 'pytorch' || s.model_format === undefined)).map((s) => s.model_id))];
    const gguf = (name: string, type: 'LLM' | 'embedding' = 'LLM') =>
      specsOf(catalog[type].get(name)!).filter((s) => s.model_format === 'ggufv2');
    expect(ids('LLM', 'qwen2.5-instruct')).toContain('Qwen/Qwen2.5-0.5B-Instruct');
    expect(ids('LLM', 'qwen2.5-instruct')).toContain('Qwen/Qwen2.5-72B-Instruct');
    expect(ids('LLM', 'llama-3.1-instruct')).toEqual(['meta-llama/Llama-3.1-8B-Instruct', 'meta-llama/Llama-3.1-70B-Instruct', 'meta-llama/Meta-Llama-3.1-405B-Instruct']);
    expect(ids('LLM', 'qwen3')).toEqual(['Qwen/Qwen3-0.6B', 'Qwen/Qwen3-1.7B', 'Qwen/Qwen3-4B', 'Qwen/Qwen3-8B', 'Qwen/Qwen3-14B', 'Qwen/Qwen3-30B-A3B', 'Qwen/Qwen3-32B', 'Qwen/Qwen3-235B-A22B']);
    expect(ids('LLM', 'gemma-2-it')).toEqual(['google/gemma-2-2b-it', 'google/gemma-2-9b-it', 'google/gemma-2-27b-it']);
    expect(ids('embedding', 'bge-small-en-v1.5')).toEqual(['BAAI/bge-small-en-v1.5']);
    expect(ids('rerank', 'bge-reranker-v2-m3')).toEqual(['BAAI/bge-reranker-v2-m3']);
    expect(ids('audio', 'whisper-small')).toEqual(['openai/whisper-small']);
    expect(ids('image', 'sd-turbo')).toEqual(['stabilityai/sd-turbo']);
    expect(ids('video', 'CogVideoX-2b')).toEqual(['THUDM/CogVideoX-2b']);
    // GGUF specs for llama.cpp, Xinference's way: one file per quantization named by a
    // template, or split parts (`quantization_parts`) for the big ones.
    for (const family of ['qwen2.5-instruct', 'qwen3', 'llama-3.2-instruct', 'llama-3.1-instruct', 'gemma-2-it', 'phi-4', 'phi-3.5-mini-instruct', 'mistral-instruct-v0.3']) {
      const specs = gguf(family);
      expect(specs.length, family).toBeGreaterThan(0);
      // One file per quantization by a template, or, where every file of a spec is split, parts only.
      for (const s of specs) expect(String(s['model_file_name_template'] ?? s['model_file_name_split_template']), family).toMatch(/\{quantization\}(-\{part\})?\.gguf$/);
    }
    expect(gguf('qwen2.5-instruct')).toContainEqual(expect.objectContaining({ model_id: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', quantization: 'q4_k_m', model_file_name_template: 'qwen2.5-0.5b-instruct-{quantization}.gguf' }));
    expect(gguf('qwen2.5-instruct')).toContainEqual(
      expect.objectContaining({ model_id: 'Qwen/Qwen2.5-7B-Instruct-GGUF', quantization: 'q4_k_m', model_file_name_split_template: 'qwen2.5-7b-instruct-{quantization}-{part}.gguf', quantization_parts: expect.objectContaining({ q4_k_m: ['00001-of-00002', '00002-of-00002'] }) }),
    );
    expect(gguf('nomic-embed-text-v1.5', 'embedding')).toContainEqual(expect.objectContaining({ model_id: 'nomic-ai/nomic-embed-text-v1.5-GGUF', quantization: 'Q4_K_M' }));
    const qwen = catalog.LLM.get('qwen2.5-instruct')!;
    expect(qwen).toMatchObject({ stop_token_ids: [151643, 151644, 151645], stop: ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] });
    expect(catalog.embedding.get('all-MiniLM-L6-v2')).toMatchObject({ dimensions: 384, max_tokens: 256 });
  });

  it('gives models whose engine ships its own model one spec with no hub', async () => {
    const catalog = await loadBuiltinCatalog();
    for (const [type, name] of [['audio', 'pocketsphinx-en-us'], ['audio', 'espeak-ng'], ['image', 'tesseract-ocr']] as const) {
      const record = catalog[type].get(name)!;
      expect(specsOf(record)).toEqual([
        { model_format: 'pytorch', quantization: 'none', model_id: null, model_hub: null, model_uri: null, model_revision: null },
      ]);
      expect(record).toMatchObject({ model_id: null, model_hub: null });
    }
  });
});

describe('flattening', () => {
  it('expands each spec into one per hub and quantization, in file order', () => {
    const record = flattenBuiltin('LLM', {
      version: 2,
      model_name: 'demo',
      model_lang: ['en'],
      model_ability: ['generate'],
      model_specs: [
        {
          model_format: 'ggufv2',
          model_size_in_billions: '0_5',
          model_src: {
            huggingface: { model_id: 'org/demo-GGUF', quantizations: ['q4_0', 'q8_0'], model_file_name_template: 'demo-{quantization}.gguf' },
            modelscope: { model_id: 'org/demo-GGUF-ms', quantizations: ['q4_0'] },
          },
        },
      ],
    });
    expect(specsOf(record)).toEqual([
      { model_format: 'ggufv2', model_size_in_billions: '0_5', quantization: 'q4_0', model_id: 'org/demo-GGUF', model_hub: 'huggingface', model_uri: null, model_revision: null, model_file_name_template: 'demo-{quantization}.gguf' },
      { model_format: 'ggufv2', model_size_in_billions: '0_5', quantization: 'q8_0', model_id: 'org/demo-GGUF', model_hub: 'huggingface', model_uri: null, model_revision: null, model_file_name_template: 'demo-{quantization}.gguf' },
      { model_format: 'ggufv2', model_size_in_billions: '0_5', quantization: 'q4_0', model_id: 'org/demo-GGUF-ms', model_hub: 'modelscope', model_uri: null, model_revision: null },
    ]);
    expect(record).toMatchObject({ context_length: 2048, chat_template: null, stop: [], version: 2 });
  });

  it('turns an image family into one spec per hub and keeps the Hugging Face one on top', () => {
    const record = flattenBuiltin('image', {
      model_name: 'pic',
      model_family: 'stable_diffusion',
      model_ability: ['text2image'],
      model_src: { modelscope: { model_id: 'ms/pic' }, huggingface: { model_id: 'hf/pic', model_revision: 'abc' } },
    });
    expect(record).toMatchObject({ model_id: 'hf/pic', model_hub: 'huggingface', model_revision: 'abc' });
    expect(specsOf(record).map((s) => s.model_hub)).toEqual(['modelscope', 'huggingface']);
  });

  it('rejects a built-in file with a bad field, naming it', () => {
    expect(() => flattenBuiltin('embedding', { model_name: 'x', dimensions: 'big', max_tokens: 1, language: ['en'], model_specs: [] })).toThrow(
      /dimensions/,
    );
  });
});
