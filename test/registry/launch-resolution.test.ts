import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../src/registry/registry.js';
import { CPU_ENV, environment, expectHangarError, openRegistry, tempHome } from './fixtures.js';

let home: string;
let cleanup: () => Promise<void>;
let registry: Registry;
let joblib: string;
let script: string;

beforeAll(async () => {
  ({ home, cleanup } = await tempHome());
  ({ registry } = await openRegistry(home, CPU_ENV));
  joblib = path.join(home, 'clf.joblib');
  script = path.join(home, 'my_launcher.py');
  await writeFile(joblib, 'x');
  await writeFile(script, 'def load(**kw): return kw\ndef infer(model, *a, **k): return model\n');
  await registry.register('flexible', { model: JSON.stringify({ model_name: 'clf', model_uri: joblib, launcher: 'sklearn', model_description: 'a classifier' }) }, false);
  await registry.register('flexible', { model: { model_name: 'echo', model_uri: `file://${script}`, launcher: 'python', launcher_args: '{"scale": 2}' } }, false);
  const folder = path.join(home, 'my-tiny-llama');
  await mkdir(folder);
  await registry.register(
    'LLM',
    {
      model: {
        version: 2,
        model_name: 'my-tiny-llama',
        model_lang: ['en'],
        model_ability: ['chat', 'generate'],
        model_family: 'llama-3.1-instruct',
        model_specs: [{ model_format: 'pytorch', model_size_in_billions: '0_01', quantization: 'none', model_uri: folder }],
      },
    },
    false,
  );
});
afterAll(() => cleanup());

describe('resolve: flexible', () => {
  it('runs an sklearn launcher with its model file', () => {
    expect(registry.resolve({ model_type: 'flexible', model_name: 'clf' })).toEqual({
      modelType: 'flexible',
      modelName: 'clf',
      engine: 'sklearn',
      runtimeEngine: 'sklearn',
      cpuBound: true,
      abilities: ['flexible'],
      load: { model_uri: joblib, launcher: 'sklearn', launcher_args: {} },
      description: { model_name: 'clf', launcher: 'sklearn', launcher_args: '{}' },
    });
  });

  it('runs a python launcher with parsed launcher_args and a local path for a file:// URI', () => {
    const resolved = registry.resolve({ model_type: 'flexible', model_name: 'echo', model_engine: 'PYTHON' });
    expect(resolved).toMatchObject({ engine: 'python', runtimeEngine: 'python', load: { model_uri: script, launcher: 'python', launcher_args: { scale: 2 } } });
  });

  it('refuses another engine than the launcher, and a launcher whose modules are missing', async () => {
    const err = await expectHangarError(() => registry.resolve({ model_type: 'flexible', model_name: 'clf', model_engine: 'python' }), 'engine_unavailable', 400);
    expect(err.message).toBe('Model clf cannot be run on engine python. Engine python does not fit model clf.');
    registry.setEnvironment(environment());
    try {
      await expectHangarError(() => registry.resolve({ model_type: 'flexible', model_name: 'clf' }), 'engine_unavailable', 400);
      expect(registry.resolve({ model_type: 'flexible', model_name: 'echo' }).engine).toBe('python');
    } finally {
      registry.setEnvironment(CPU_ENV);
    }
  });
});

describe('resolve: LLM spec selection', () => {
  it('takes the first spec with quantization none for pytorch by default', () => {
    const resolved = registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'transformers' });
    expect(resolved).toMatchObject({
      modelType: 'LLM',
      engine: 'Transformers',
      runtimeEngine: 'transformers',
      abilities: ['chat', 'generate', 'tools'],
      load: { model_id: 'Qwen/Qwen2.5-0.5B-Instruct', model_hub: 'huggingface', model_format: 'pytorch', model_size_in_billions: '0_5', quantization: 'none', launcher_args: {} },
      description: { model_name: 'qwen2.5-instruct', model_format: 'pytorch', model_size_in_billions: '0_5', quantization: 'none', model_family: 'qwen2.5-instruct', context_length: 32768, model_lang: ['en', 'zh'] },
    });
    expect(resolved.load.chat_template).toContain('<|im_start|>');
    expect(resolved.load.stop_token_ids).toEqual([151643, 151644, 151645]);
  });

  it('filters by size given as "1_5", 1.5 or "1.5", by format, quantization and hub', () => {
    for (const size of ['1_5', 1.5, '1.5']) {
      expect(registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_size_in_billions: size }).load.model_id).toBe('Qwen/Qwen2.5-1.5B-Instruct');
    }
    expect(registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_format: 'awq', model_size_in_billions: 7 }).load).toMatchObject({
      model_id: 'Qwen/Qwen2.5-7B-Instruct-AWQ',
      quantization: 'Int4',
    });
    // A format alone takes its first spec, as Xinference picks.
    expect(registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_format: 'gptq' }).load).toMatchObject({ model_id: 'Qwen/Qwen2.5-0.5B-Instruct-GPTQ-Int4', quantization: 'Int4' });
    expect(registry.resolve({ model_name: 'qwen3', model_engine: 'Transformers', model_size_in_billions: 30 }).load).toMatchObject({ model_id: 'Qwen/Qwen3-30B-A3B' });
    expect(registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_size_in_billions: 7, download_hub: 'modelscope' }).load).toMatchObject({
      model_id: 'qwen/Qwen2.5-7B-Instruct',
      model_hub: 'modelscope',
    });
    // HANGAR_MODEL_SRC's hub is a preference: its spec where the family has one, else another hub's.
    const preferred = (name: string, size: number | string) => registry.resolve({ model_name: name, model_engine: 'Transformers', model_size_in_billions: size, preferred_hub: 'modelscope' }).load;
    expect(preferred('qwen2.5-instruct', 7)).toMatchObject({ model_hub: 'modelscope' });
    expect(registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_size_in_billions: 7 }).load).toMatchObject({ model_hub: 'huggingface' });
    expect(preferred('smollm3', 3)).toMatchObject({ model_hub: 'huggingface' });
  });

  it('picks the spec the engine reads: gguf for llama.cpp, quantization matched case-insensitively', async () => {
    registry.setEnvironment(environment([], [], 0, ['node-llama-cpp']));
    try {
      // Without a quantization, the family's first: q4_k_m, what Ollama and most guides default to.
      expect(registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'llama.cpp' }).load).toMatchObject({ model_format: 'ggufv2', quantization: 'q4_k_m' });
      // The launch body Xinference users send.
      const xinference = registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'llama.cpp', model_format: 'ggufv2', model_size_in_billions: '0_5', quantization: 'q4_k_m' });
      expect(xinference.load).toMatchObject({ model_id: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', model_hub: 'huggingface', quantization: 'q4_k_m' });
      expect(xinference.runtimeEngine).toBe('llama_cpp');
      const split = registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'llama.cpp', model_size_in_billions: 7, quantization: 'q4_k_m' });
      expect(split.load).toMatchObject({ model_file_name_split_template: 'qwen2.5-7b-instruct-{quantization}-{part}.gguf', quantization_parts: expect.objectContaining({ q4_k_m: ['00001-of-00002', '00002-of-00002'] }) });
      // Its launch options: numbers (or the CLI's strings holding one), each checked by name.
      const lc = (engine_kwargs: Record<string, unknown>) => registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'llama.cpp', engine_kwargs });
      expect(lc({ n_ctx: '4096', n_parallel: 4, n_gpu_layers: -1, n_threads: 2, device: 'cpu' }).engine).toBe('llama.cpp');
      for (const [options, param] of [[{ n_ctx: 'lots' }, 'n_ctx'], [{ n_parallel: 0 }, 'n_parallel'], [{ n_gpu_layers: -2 }, 'n_gpu_layers'], [{ n_threads: 1.5 }, 'n_threads']] as const) {
        const err = await expectHangarError(() => lc(options), 'invalid_field', 400);
        expect(err.param).toBe(param);
      }
      expect(registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'llama.cpp', quantization: 'Q8_0' }).load).toMatchObject({
        quantization: 'q8_0',
        model_file_name_template: 'qwen2.5-0.5b-instruct-{quantization}.gguf',
      });
    } finally {
      registry.setEnvironment(CPU_ENV);
    }
  });

  it('launches a custom LLM from its folder with its family template', () => {
    const resolved = registry.resolve({ model_type: 'LLM', model_name: 'my-tiny-llama', model_engine: 'Transformers' });
    expect(resolved.load).toMatchObject({ model_uri: path.join(home, 'my-tiny-llama'), model_size_in_billions: '0_01', quantization: 'none' });
    expect(resolved.load.chat_template).toContain('<|start_header_id|>');
    expect(resolved.description).toMatchObject({ model_family: 'llama-3.1-instruct' });
  });

  it('refuses filters that match no spec, naming the parameter', async () => {
    const bySize = await expectHangarError(() => registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_size_in_billions: 5 }), 'model_spec_not_found', 400);
    expect(bySize.param).toBe('model_size_in_billions');
    expect(bySize.message).toBe('Model not found, name: qwen2.5-instruct, format: None, size: 5, quantization: None');
    const byQuant = await expectHangarError(() => registry.resolve({ model_name: 'qwen3', model_engine: 'Transformers', quantization: 'Int2' }), 'model_spec_not_found', 400);
    expect(byQuant.param).toBe('quantization');
  });

  it('refuses an unknown, unfitting or unusable engine', async () => {
    const unknown = await expectHangarError(() => registry.resolve({ model_name: 'qwen3', model_engine: 'TurboEngine' }), 'engine_unavailable', 400);
    expect(unknown.message).toBe('Model qwen3 cannot be run on engine TurboEngine. TurboEngine is not a known LLM engine.');
    expect(unknown.param).toBe('model_engine');
    await expectHangarError(() => registry.resolve({ model_name: 'deepseek-v2.5', model_engine: 'llama.cpp' }), 'engine_unavailable', 400);
    // GGUF rerankers are not served: refused by name, not started and failed later.
    const rerank = await expectHangarError(() => registry.resolve({ model_type: 'rerank', model_name: 'bge-reranker-base', model_engine: 'llama.cpp' }), 'engine_unavailable', 400);
    expect(rerank.message).toBe('Model bge-reranker-base cannot be run on engine llama.cpp. llama.cpp is not a known rerank engine.');
    const noGpu = await expectHangarError(() => registry.resolve({ model_name: 'qwen3', model_engine: 'vllm' }), 'engine_unavailable', 400);
    expect(noGpu.message).toContain('vllm');
    const wrongFormat = await expectHangarError(() => registry.resolve({ model_name: 'qwen2.5-instruct', model_engine: 'Transformers', model_format: 'ggufv2' }), 'engine_unavailable', 400);
    expect(wrongFormat.param).toBe('model_format');
  });

  it('asks for model_engine on LLM launches', async () => {
    await expectHangarError(() => registry.resolve({ model_name: 'qwen3' }), 'missing_model_engine', 400);
  });
});

describe('resolve: other types and names', () => {
  it('defaults to the first usable engine', () => {
    expect(registry.resolve({ model_type: 'embedding', model_name: 'bge-small-en-v1.5' })).toMatchObject({
      engine: 'sentence_transformers',
      runtimeEngine: 'sentence_transformers',
      abilities: ['embed'],
      load: { model_id: 'BAAI/bge-small-en-v1.5', model_format: 'pytorch', quantization: 'none' },
      description: { dimensions: 384, max_tokens: 512, language: ['en'] },
    });
    expect(registry.resolve({ model_type: 'rerank', model_name: 'bge-reranker-base' })).toMatchObject({ abilities: ['rerank'], description: { type: 'normal' } });
    expect(registry.resolve({ model_type: 'audio', model_name: 'espeak-ng' })).toMatchObject({
      engine: 'espeak',
      abilities: ['text2audio'],
      load: { model_config: { voice: 'en-us' } },
      description: { model_family: 'espeak', model_ability: ['text2audio'] },
    });
    expect(registry.resolve({ model_type: 'image', model_name: 'tesseract-ocr' }).load).not.toHaveProperty('model_id');
  });

  it('names the first fitting engine when none is usable', async () => {
    const err = await expectHangarError(() => registry.resolve({ model_type: 'video', model_name: 'CogVideoX-2b' }), 'engine_unavailable', 400);
    expect(err.message).toMatch(/^Model CogVideoX-2b cannot be run on engine diffusers\. .*diffusers/);
  });

  it('answers 404 for a name no type knows and 400 naming the type for a name of another type', async () => {
    const unknown = await expectHangarError(() => registry.resolve({ model_type: 'flexible', model_name: 'no-such-model' }), 'registration_not_found', 404);
    expect(unknown.message).toContain('no-such-model');
    const mismatch = await expectHangarError(() => registry.resolve({ model_name: 'bge-small-en-v1.5', model_engine: 'Transformers' }), 'model_type_mismatch', 400);
    expect(mismatch.message).toBe('Model bge-small-en-v1.5 is registered as type embedding, not LLM; launch it with model_type embedding');
    expect(mismatch.param).toBe('model_type');
    await expectHangarError(() => registry.resolve({ model_type: 'hologram', model_name: 'x' }), 'unsupported_model_type', 400);
    await expectHangarError(() => registry.resolve({ model_name: '' }), 'missing_model_name', 400);
  });

  it("checks the simulator's launch options, naming the field, and lets other extra fields pass", async () => {
    const sim = (engine_kwargs: Record<string, unknown>) => registry.resolve({ model_type: 'LLM', model_name: 'simulator', model_engine: 'simulator', engine_kwargs });
    // Numbers, numbers as the CLI passes them (strings), nulls, and fields other engines read.
    expect(sim({ step_ms: 0, ttft_ms: '250', max_batch: 1024, device: 'cpu' }).engine).toBe('simulator');
    expect(sim({ step_ms: null }).engine).toBe('simulator');
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ step_ms: 'fast' }, 'step_ms', /^step_ms: expected a number \(or a string holding one\), got "fast"$/],
      [{ step_ms: -1 }, 'step_ms', /^step_ms: .*>=0/],
      [{ step_ms: true }, 'step_ms', /^step_ms: expected a number .*got true$/],
      [{ ttft_ms: 600_001 }, 'ttft_ms', /^ttft_ms: .*<=600000/],
      [{ max_batch: 2.5 }, 'max_batch', /^max_batch: expected an integer .*got 2.5$/],
      [{ max_batch: '0' }, 'max_batch', /^max_batch: .*>=1/],
    ];
    for (const [options, param, message] of cases) {
      const err = await expectHangarError(() => sim(options), 'invalid_field', 400);
      expect(err.param, JSON.stringify(options)).toBe(param);
      expect(err.message, JSON.stringify(options)).toMatch(message);
    }
  });
});
