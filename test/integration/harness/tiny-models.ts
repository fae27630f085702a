import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot, venvPython } from './server.js';

export interface TinyLlm {
  path: string;
  eos_token_id: number;
  vocab_size: number;
}

/** Runs `test/fixtures/<script> <args>` and returns the JSON line it prints. */
function runFixture<T>(script: string, args: string[]): T {
  const out = execFileSync(venvPython, [path.join(repoRoot, 'test', 'fixtures', script), ...args], {
    encoding: 'utf8',
    env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
  });
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`${script} printed no JSON: ${out}`);
  return JSON.parse(line) as T;
}

/** Runs `test/fixtures/tiny_models.py <kind> <dir>` and returns the JSON line it prints. */
export function buildTinyModel<T>(kind: 'llm' | 'lora' | 'vision' | 'embedder' | 'cross-encoder', dir: string): T {
  return runFixture<T>('tiny_models.py', [kind, dir]);
}

/** The tiny real Llama (trained BPE tokenizer + 2 random layers, fixed seed) in `dir`. */
export function buildTinyLlm(dir: string): TinyLlm {
  return buildTinyModel<TinyLlm>('llm', dir);
}

/** The tiny Llama plus two LoRA adapters made with peft (`a`, `b`), each with its own random weights. */
export function buildTinyLora(dir: string): TinyLlm & { adapters: Record<'a' | 'b', string> } {
  return buildTinyModel('lora', dir);
}

export interface TinyVision extends TinyLlm {
  image_tokens: number;
  chat_template: string;
  /** Two PNGs of different pixels. */
  images: Record<'a' | 'b', string>;
}

/** The tiny LLaVA (CLIP tower + the tiny Llama's shape) with its processor, and two test images. */
export function buildTinyVision(dir: string): TinyVision {
  return buildTinyModel<TinyVision>('vision', dir);
}

/** A vision chat registration for it: a built-in vision family, the processor's own template. */
export function tinyVisionRegistration(name: string, vision: TinyVision) {
  return llmRegistration(name, ['chat', 'vision'], [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_uri: vision.path }], {
    model_family: 'llava-1.5-hf',
    chat_template: vision.chat_template,
    stop_token_ids: [vision.eos_token_id],
  });
}

/** A custom LLM registration for it (Xinference's shape: a JSON string in `model`). */
export function tinyLlmRegistration(name: string, modelPath: string, abilities: string[] = ['chat', 'generate']) {
  return llmRegistration(name, abilities, [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_uri: modelPath }]);
}

/** A custom LLM registration of the tiny models' family (Xinference's shape: a JSON string in `model`). */
function llmRegistration(name: string, abilities: string[], specs: object[], fields: Record<string, unknown> = {}) {
  return {
    model: JSON.stringify({
      version: 2,
      model_name: name,
      model_family: 'qwen2.5-instruct',
      model_lang: ['en'],
      model_ability: abilities,
      context_length: 512,
      ...fields,
      model_specs: specs,
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

export interface TinyGguf {
  dir: string;
  hf_path: string;
  files: { f32?: string; q8_0?: string; embedding?: string };
  eos_token_id: number;
  vocab_size: number;
  chat_template: string;
}

/**
 * The tiny Llama written as GGUF files (test/fixtures/tiny_gguf.py): `tiny-f32.gguf`
 * and `tiny-q8_0.gguf` in `dir` (and its Hugging Face folder in `dir/hf`), or with
 * `embedding` the same weights declared with mean pooling, `tiny-embed-f32.gguf`.
 */
export function buildTinyGguf(dir: string, embedding = false): TinyGguf {
  return runFixture<TinyGguf>('tiny_gguf.py', [dir, ...(embedding ? ['--embedding'] : [])]);
}

/**
 * A custom LLM registration for the tiny GGUF files: a ggufv2 spec per file (the
 * folder and Xinference's `model_file_name_template`), the Hugging Face folder as its
 * pytorch spec (so both engines serve the same weights), and the tiny chat template.
 */
export function tinyGgufRegistration(name: string, gguf: TinyGguf, abilities: string[] = ['chat', 'generate', 'tools']) {
  const spec = (quantization: string) => ({
    model_format: 'ggufv2',
    model_size_in_billions: 1,
    quantization,
    model_uri: gguf.dir,
    model_file_name_template: 'tiny-{quantization}.gguf',
  });
  return llmRegistration(
    name,
    abilities,
    [{ model_format: 'pytorch', model_size_in_billions: 1, quantization: 'none', model_uri: gguf.hf_path }, spec('q8_0'), spec('f32')],
    { chat_template: gguf.chat_template, stop_token_ids: [gguf.eos_token_id], stop: ['<|im_end|>'] },
  );
}
