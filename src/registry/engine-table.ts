import type { z } from 'zod';
import type { ModelType } from './model-type.js';
import { llamaCppOptions } from './llama-cpp-options.js';
import { simulatorOptions } from './simulator-options.js';

/** Something an engine needs from the runtime environment (checked against EnvironmentFacts). */
export type Requirement =
  | { readonly kind: 'python_module'; readonly name: string }
  | { readonly kind: 'executable'; readonly name: string }
  /** An npm package: engines whose runtime is the Node one (llama.cpp through node-llama-cpp). */
  | { readonly kind: 'node_module'; readonly name: string }
  | { readonly kind: 'gpu' };

/**
 * Which models an engine can run. Every listed criterion must hold; a missing one
 * does not restrict. `formats` is checked per spec (an LLM family may have pytorch
 * and gguf specs), the others per model.
 */
export interface EngineMatch {
  readonly formats?: readonly string[];
  readonly families?: readonly string[];
  readonly abilities?: readonly string[];
  /** Flexible models: the launcher the registration names. */
  readonly launcher?: string;
}

export interface EngineDefinition {
  /** The name users pass as `model_engine` and see in `/v1/engines` (Xinference's spelling). */
  readonly name: string;
  /** The engine class the Python runtime loads (`engine` in the LOAD message, docs/runtime-protocol.md). */
  readonly runtimeEngine: string;
  readonly requires: readonly Requirement[];
  readonly match: EngineMatch;
  /**
   * False for an engine whose steps are timers, not CPU work (the simulator; the
   * runtime's `Engine.cpu_bound`): its runtime keeps its CPU priority and a session of
   * its own (docs/runtime-protocol.md, "CPU priority"). Absent means true.
   */
  readonly cpuBound?: false;
  /**
   * The launch options the engine reads (the launch body's extra fields), checked when
   * a launch is resolved, so a bad one is a 400 naming the field before any runtime
   * starts, and an autostart entry is refused when it is added, not at the next start.
   * The runtime checks them again. Absent: the engine checks its own.
   */
  readonly options?: z.ZodType;
}

const pythonModule = (name: string): Requirement => ({ kind: 'python_module', name });
const executable = (name: string): Requirement => ({ kind: 'executable', name });
const nodeModule = (name: string): Requirement => ({ kind: 'node_module', name });
const gpu: Requirement = { kind: 'gpu' };

/** PyTorch-layout weights; gptq/awq/bnb are quantised checkpoints in the same layout. */
const TORCH_FORMATS = ['pytorch', 'gptq', 'awq', 'bnb'];

/**
 * GGUF models through llama.cpp, for LLMs and embedding models. Its runtime is the
 * Node one (src/llama-runtime/), on node-llama-cpp's prebuilt binaries.
 */
const LLAMA_CPP: EngineDefinition = {
  name: 'llama.cpp',
  runtimeEngine: 'llama_cpp',
  requires: [nodeModule('node-llama-cpp')],
  options: llamaCppOptions,
  match: { formats: ['ggufv2'] },
};

/**
 * The engines this service knows, per model type, in order of preference: where a
 * launch names no engine (every type but LLM, notes §3.1), the first usable one
 * that matches the model is taken.
 */
export const ENGINE_TABLE: { readonly [T in ModelType]: readonly EngineDefinition[] } = {
  LLM: [
    {
      name: 'Transformers',
      runtimeEngine: 'transformers',
      requires: [pythonModule('torch'), pythonModule('transformers')],
      match: { formats: TORCH_FORMATS },
    },
    {
      name: 'vLLM',
      runtimeEngine: 'vllm',
      // vLLM has no CPU path worth serving from; without a GPU it cannot start.
      requires: [pythonModule('vllm'), gpu],
      match: { formats: [...TORCH_FORMATS, 'fp8'] },
    },
    {
      // A product feature for load tests (docs/simulator.md): serves only the `simulator` family.
      name: 'simulator',
      runtimeEngine: 'simulator',
      requires: [],
      cpuBound: false,
      options: simulatorOptions,
      match: { formats: ['simulator'] },
    },
    LLAMA_CPP,
  ],
  embedding: [
    {
      name: 'sentence_transformers',
      runtimeEngine: 'sentence_transformers',
      requires: [pythonModule('torch'), pythonModule('sentence_transformers')],
      match: { formats: ['pytorch'] },
    },
    LLAMA_CPP,
  ],
  rerank: [
    {
      name: 'sentence_transformers',
      runtimeEngine: 'sentence_transformers',
      requires: [pythonModule('torch'), pythonModule('sentence_transformers')],
      match: { formats: ['pytorch'] },
    },
  ],
  audio: [
    {
      // Speech recognition (Whisper family) and text-to-speech pipelines of transformers.
      name: 'transformers',
      runtimeEngine: 'transformers_audio',
      requires: [pythonModule('torch'), pythonModule('transformers')],
      match: { families: ['whisper', 'wav2vec2', 'transformers-tts', 'vits', 'musicgen', 'bark'], abilities: ['audio2text', 'text2audio'] },
    },
    {
      name: 'pocketsphinx',
      runtimeEngine: 'pocketsphinx',
      requires: [pythonModule('pocketsphinx'), pythonModule('soundfile')],
      match: { families: ['pocketsphinx'], abilities: ['audio2text'] },
    },
    {
      name: 'espeak',
      runtimeEngine: 'espeak',
      requires: [executable('espeak-ng'), pythonModule('soundfile')],
      match: { families: ['espeak'], abilities: ['text2audio'] },
    },
  ],
  image: [
    {
      name: 'diffusers',
      runtimeEngine: 'diffusers',
      requires: [pythonModule('torch'), pythonModule('diffusers')],
      match: { abilities: ['text2image', 'image2image', 'inpainting'] },
    },
    {
      name: 'tesseract',
      runtimeEngine: 'tesseract',
      requires: [executable('tesseract'), pythonModule('PIL')],
      match: { families: ['tesseract'], abilities: ['ocr'] },
    },
    {
      // Image-to-text models that transformers loads natively: OCR models such as
      // GOT-OCR 2.0 and captioners (VisionEncoderDecoder); served by /v1/images/ocr.
      name: 'transformers',
      runtimeEngine: 'transformers_image',
      requires: [pythonModule('torch'), pythonModule('transformers'), pythonModule('PIL')],
      match: { families: ['ocr', 'image-to-text'], abilities: ['ocr'] },
    },
  ],
  video: [
    {
      name: 'diffusers',
      runtimeEngine: 'diffusers',
      requires: [pythonModule('torch'), pythonModule('diffusers')],
      match: { abilities: ['text2video', 'image2video', 'firstlastframe2video'] },
    },
  ],
  // A flexible model names its launcher; the launcher is its engine.
  flexible: [
    { name: 'sklearn', runtimeEngine: 'sklearn', requires: [pythonModule('sklearn'), pythonModule('joblib')], match: { launcher: 'sklearn' } },
    { name: 'python', runtimeEngine: 'python', requires: [], match: { launcher: 'python' } },
    {
      // Xinference's transformers launcher: a pipeline over the model's folder (its infer
      // calls the pipeline). It ran the LLM engine, which has no infer, until 2026-11-29.
      name: 'transformers',
      runtimeEngine: 'transformers_pipeline',
      requires: [pythonModule('torch'), pythonModule('transformers')],
      match: { launcher: 'transformers' },
    },
  ],
};

/** Looks an engine up the way Xinference matches `model_engine`: case-insensitively. */
export function findEngine(type: ModelType, name: string): EngineDefinition | undefined {
  const wanted = name.toLowerCase();
  return ENGINE_TABLE[type].find((engine) => engine.name.toLowerCase() === wanted);
}

/** Every Python module some engine needs: what the caller's environment probe should look for. */
export function requiredPythonModules(): string[] {
  return requirementNames('python_module');
}

/** Every program some engine needs on the PATH. */
export function requiredExecutables(): string[] {
  return requirementNames('executable');
}

/** Every npm package some engine needs. */
export function requiredNodeModules(): string[] {
  return requirementNames('node_module');
}

function requirementNames(kind: 'python_module' | 'executable' | 'node_module'): string[] {
  const names = Object.values(ENGINE_TABLE).flatMap((engines) =>
    engines.flatMap((engine) => engine.requires.flatMap((r) => (r.kind === kind && 'name' in r ? [r.name] : []))),
  );
  return [...new Set(names)].sort();
}
