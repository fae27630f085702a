import { execFileSync } from 'node:child_process';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot, venvPython } from './server.js';

/** The kinds of test/fixtures/model_cache.py. */
export type TinyKind = 'llm' | 'lora' | 'vision' | 'embedder' | 'cross-encoder' | 'gguf' | 'gguf-embedding' | 'whisper' | 'captioner' | 'tts' | 'diffusion' | 'sklearn';

// What this test process already asked the cache for: one Python start per kind and file.
const looked = new Map<TinyKind, unknown>();

/**
 * The tiny test models of these kinds from the machine's cache (test/fixtures/model_cache.py),
 * each built by the first run that needs it and read in place by every test after: one
 * Python process answers for all of them. Tests only read these files; copy a model
 * (copyTinyModel) to have it somewhere of your own.
 */
export function tinyModels(kinds: TinyKind[]): unknown[] {
  const missing = [...new Set(kinds.filter((k) => !looked.has(k)))];
  if (missing.length > 0) {
    const out = execFileSync(venvPython, [path.join(repoRoot, 'test', 'fixtures', 'model_cache.py'), ...missing], {
      encoding: 'utf8',
      env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
      timeout: 300_000,
    });
    const lines = out.split('\n').filter((l) => l.startsWith('{'));
    if (lines.length !== missing.length) throw new Error(`model_cache.py ${missing.join(' ')} printed ${lines.length} JSON lines: ${out}`);
    missing.forEach((kind, i) => looked.set(kind, JSON.parse(lines[i]!)));
  }
  return kinds.map((k) => looked.get(k));
}

/** The tiny test model of one kind (see tinyModels). */
export function tinyModel<T>(kind: TinyKind): T {
  return tinyModels([kind])[0] as T;
}

/** A copy of a cached model folder at `dest`, for a test that needs it in a place (or under a name) of its own. */
export async function copyTinyModel<T extends { path: string }>(model: T, dest: string): Promise<T> {
  await cp(model.path, dest, { recursive: true });
  return { ...model, path: dest };
}

export interface TinyLlm {
  path: string;
  eos_token_id: number;
  vocab_size: number;
}

/** The tiny real Llama (trained BPE tokenizer + 2 random layers, fixed seed). */
export function tinyLlm(): TinyLlm {
  return tinyModel<TinyLlm>('llm');
}

/** The tiny Llama plus two LoRA adapters made with peft (`a`, `b`), each with its own random weights. */
export function tinyLora(): TinyLlm & { adapters: Record<'a' | 'b', string> } {
  return tinyModel('lora');
}
export interface TinyVision extends TinyLlm {
  image_tokens: number;
  chat_template: string;
  /** Two PNGs of different pixels. */
  images: Record<'a' | 'b', string>;
}

/** The tiny LLaVA (CLIP tower + the tiny Llama's shape) with its processor, and two test images. */
export function tinyVision(): TinyVision {
  return tinyModel<TinyVision>('vision');
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

/** The tiny real BERT embedder (sentence-transformers layout). */
export function tinyEmbedder(): TinyEmbedder {
  return tinyModel<TinyEmbedder>('embedder');
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
export function tinyGguf(embedding = false): TinyGguf {
  return tinyModel<TinyGguf>(embedding ? 'gguf-embedding' : 'gguf');
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
