import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from './server.js';

export interface TinyLlm {
  path: string;
  eos_token_id: number;
  vocab_size: number;
}

/** Runs `test/fixtures/tiny_models.py <kind> <dir>` and returns the JSON line it prints. */
export function buildTinyModel<T>(kind: 'llm' | 'embedder' | 'cross-encoder', dir: string): T {
  const out = execFileSync(venvPython, [path.join(repoRoot, 'test', 'fixtures', 'tiny_models.py'), kind, dir], {
    encoding: 'utf8',
    env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
  });
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`tiny_models.py printed no JSON: ${out}`);
  return JSON.parse(line) as T;
}

/** The tiny real Llama (trained BPE tokenizer + 2 random layers, fixed seed) in `dir`. */
export function buildTinyLlm(dir: string): TinyLlm {
  return buildTinyModel<TinyLlm>('llm', dir);
}

/** A custom LLM registration for it (Xinference's shape: a JSON string in `model`). */
export function tinyLlmRegistration(name: string, modelPath: string, abilities: string[] = ['chat', 'generate']) {
  return {
    model: JSON.stringify({
      version: 2,
      model_name: name,
      model_family: 'qwen2.5-instruct',
      model_lang: ['en'],
      model_ability: abilities,
      context_length: 512,
      model_specs: [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_uri: modelPath }],
    }),
    persist: false,
  };
}

export interface TinyEmbedder {
  path: string;
  dimensions: number;
  max_tokens: number;
}

/** The tiny real BERT embedder in `dir` (sentence-transformers layout). */
export function buildTinyEmbedder(dir: string): TinyEmbedder {
  return buildTinyModel<TinyEmbedder>('embedder', dir);
}

/** A custom embedding registration for it (the body of POST /v1/model_registrations/embedding). */
export function tinyEmbedderRegistration(name: string, embedder: TinyEmbedder, persist = false) {
  return {
    model: { model_name: name, dimensions: embedder.dimensions, max_tokens: embedder.max_tokens, language: ['en'], model_specs: [{ model_format: 'pytorch', quantization: 'none', model_uri: embedder.path }] },
    persist,
  };
}
