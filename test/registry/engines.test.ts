import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from '../../src/registry/registry.js';
import { CPU_ENV, environment, openRegistry, tempHome } from './fixtures.js';

let home: string;
let cleanup: () => Promise<void>;
let registry: Registry;

beforeAll(async () => {
  ({ home, cleanup } = await tempHome());
  ({ registry } = await openRegistry(home, environment()));
});
afterAll(() => cleanup());

describe('engines', () => {
  it('maps every fitting engine to the reason it cannot run in an empty environment', () => {
    registry.setEnvironment(environment());
    expect(registry.engines('LLM', 'qwen2.5-instruct')).toEqual({
      Transformers: 'Engine Transformers needs Python modules torch, transformers, which are not installed in the runtime environment',
      vLLM: 'Engine vLLM needs Python module vllm, which is not installed in the runtime environment; Engine vLLM needs a GPU',
      'llama.cpp': 'Engine llama.cpp needs the npm package node-llama-cpp, which is not installed (run `npm ci`)',
    });
    expect(registry.engines('audio', 'espeak-ng')).toEqual({
      espeak: 'Engine espeak needs Python module soundfile, which is not installed in the runtime environment; Engine espeak needs the program espeak-ng, which is not on the PATH of the runtime environment',
    });
  });

  it('lists the launchable combinations of a usable LLM engine, grouped per format and size', () => {
    registry.setEnvironment(environment(['torch', 'transformers', 'vllm'], [], 0, ['node-llama-cpp']));
    const table = registry.engines('LLM', 'qwen2.5-instruct')!;
    expect(table['vLLM']).toBe('Engine vLLM needs a GPU');
    expect(table['Transformers']).toContainEqual({ model_name: 'qwen2.5-instruct', model_format: 'pytorch', model_size_in_billions: '0_5', quantizations: ['none'] });
    expect(table['Transformers']).toContainEqual({ model_name: 'qwen2.5-instruct', model_format: 'awq', model_size_in_billions: 7, quantizations: ['Int4'] });
    expect(table['Transformers']).toContainEqual({ model_name: 'qwen2.5-instruct', model_format: 'gptq', model_size_in_billions: 72, quantizations: ['Int4', 'Int8'] });
    // Seven sizes in each of pytorch, gptq and awq (Xinference's catalog, docs/catalog-sources.md).
    expect((table['Transformers'] as unknown[]).length).toBe(21);
    expect(table['llama.cpp']).toContainEqual({
      model_name: 'qwen2.5-instruct',
      model_format: 'ggufv2',
      model_size_in_billions: '0_5',
      quantizations: ['q4_k_m', 'q2_k', 'q3_k_m', 'q4_0', 'q5_0', 'q5_k_m', 'q6_k', 'q8_0', 'fp16'],
    });
    expect((table['llama.cpp'] as unknown[]).length).toBe(7);
  });

  it('turns vLLM usable once there is a GPU', () => {
    registry.setEnvironment(environment(['vllm'], [], 1));
    expect(Array.isArray(registry.engines('LLM', 'llama-3.1-instruct')!['vLLM'])).toBe(true);
  });

  it('leaves out engines that do not fit the model', () => {
    registry.setEnvironment(CPU_ENV);
    expect(Object.keys(registry.engines('LLM', 'gemma-2-it')!)).toEqual(['Transformers', 'vLLM', 'llama.cpp']);
    // A family without GGUF specs has no llama.cpp entry.
    expect(Object.keys(registry.engines('LLM', 'deepseek-v2.5')!)).toEqual(['Transformers', 'vLLM']);
    expect(Object.keys(registry.engines('audio', 'whisper-tiny')!)).toEqual(['transformers']);
    expect(Object.keys(registry.engines('image', 'tesseract-ocr')!)).toEqual(['tesseract']);
    expect(Object.keys(registry.engines('image', 'sd-turbo')!)).toEqual(['diffusers']);
  });

  it('answers one entry for other types', () => {
    registry.setEnvironment(CPU_ENV);
    expect(registry.engines('embedding', 'bge-small-en-v1.5')).toEqual({
      sentence_transformers: [{ model_name: 'bge-small-en-v1.5', model_format: 'pytorch', quantizations: ['none'] }],
    });
    expect(registry.engines('audio', 'pocketsphinx-en-us')).toEqual({
      pocketsphinx: [{ model_name: 'pocketsphinx-en-us', model_family: 'pocketsphinx', model_ability: ['audio2text'] }],
    });
    expect(registry.engines('image', 'sd-turbo')).toEqual({
      diffusers: 'Engine diffusers needs Python module diffusers, which is not installed in the runtime environment',
    });
  });

  it('answers null for an unknown name or type (Xinference: 200 null)', () => {
    expect(registry.engines('LLM', 'no-such-model')).toBeNull();
    expect(registry.engines('hologram', 'qwen3')).toBeNull();
    expect(registry.engines('embedding', 'qwen3')).toBeNull();
  });

  it('knows which modules and programs to probe for', () => {
    expect(Registry.requiredPythonModules()).toEqual(
      expect.arrayContaining(['torch', 'transformers', 'vllm', 'sentence_transformers', 'pocketsphinx', 'diffusers', 'sklearn', 'joblib']),
    );
    expect(Registry.requiredPythonModules()).not.toContain('llama_cpp');
    expect(Registry.requiredExecutables().sort()).toEqual(['espeak-ng', 'tesseract']);
    expect(Registry.requiredNodeModules()).toEqual(['node-llama-cpp']);
  });
});
