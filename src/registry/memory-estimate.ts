import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { modelSizeValue } from './model-size.js';
import { ggufFileName, ggufPartNames, type ResolvedModel } from './resolved-model.js';
import { runtimeOverhead } from './runtime-overhead.js';
import { hubShape, type HubAccess } from './hub-weights.js';
import { weightsOfFolder, ggufShape, type ModelShape } from './weight-files.js';

/**
 * What one replica of a model is expected to hold in memory, before it loads
 * (docs/on-demand.md, "Memory estimate"): the weights as the engine will hold them,
 * the KV cache it allocates, and the runtime process's own overhead. Bytes.
 */
export interface MemoryEstimate {
  /** weights + kv_cache + overhead. */
  bytes: number;
  weights: number;
  kv_cache: number;
  overhead: number;
  /**
   * Where the weights' size came from: the files' own headers (downloaded or local), the
   * hub's file listing before a download, or the catalog's parameter count.
   */
  basis: 'files' | 'hub' | 'catalog' | 'none';
}

export interface EstimateInput {
  resolved: ResolvedModel;
  /** The launch's `model_path`, which wins over the registration's `model_uri`. */
  modelPath?: string | undefined;
  engineKwargs: Record<string, unknown>;
  /** Whether the replica runs on a GPU (weights in the checkpoint's dtype there, float32 on CPU). */
  onGpu: boolean;
  /** `<home>/cache`, where a hub model's downloaded files are. */
  cacheDir: string;
  /** Ask the hub for the files' sizes when they are not here yet; absent: the catalog's size instead. */
  hub?: HubAccess | null;
}

/** llama.cpp's defaults in src/llama-runtime/engine/engine-options.ts (a runtime of its own: not imported). */
const LLAMA_DEFAULT_PARALLEL = 8;
const LLAMA_DEFAULT_MAX_CONTEXT = 8192;
/**
 * The Transformers engine's cache grows with each sequence; it is reserved here for
 * one sequence of this many tokens at most (a registration's 32k or 128k context is
 * what a model can take, not what a request typically uses).
 */
const TRANSFORMERS_KV_TOKENS = 8192;

export async function estimateMemory(input: EstimateInput): Promise<MemoryEstimate> {
  const { resolved, engineKwargs } = input;
  const engine = resolved.runtimeEngine;
  const overhead = runtimeOverhead(engine);
  // The simulator's "model" is a token counter (its catalog size is what it pretends
  // to be); the offline engines ship their models, counted in the runtime's own memory.
  if (WEIGHTLESS_ENGINES.has(engine)) return { bytes: overhead, weights: 0, kv_cache: 0, overhead, basis: 'files' };
  // Best effort: a file that cannot be read (a dangling link, no permission) leaves the
  // size unknown; the load itself says what is wrong with the model.
  const found = await modelShape(input).catch(() => null);
  let weights = 0;
  let basis: MemoryEstimate['basis'] = 'none';
  if (found) {
    basis = found.basis;
    weights = inMemoryWeights(found.shape, engine, engineKwargs, input.onGpu);
  }
  const kvCache = found && resolved.modelType === 'LLM' ? kvCacheBytes(found.shape, resolved, engineKwargs, input.onGpu) : 0;
  return { bytes: weights + kvCache + overhead, weights, kv_cache: kvCache, overhead, basis };
}

/** The estimate for a shape already known (a hub search reads sizes itself); `basis` says where the shape came from. */
export function estimateOfShape(shape: ModelShape, basis: MemoryEstimate['basis'], resolved: ResolvedModel, engineKwargs: Record<string, unknown>, onGpu: boolean): MemoryEstimate {
  const overhead = runtimeOverhead(resolved.runtimeEngine);
  const weights = inMemoryWeights(shape, resolved.runtimeEngine, engineKwargs, onGpu);
  const kvCache = resolved.modelType === 'LLM' ? kvCacheBytes(shape, resolved, engineKwargs, onGpu) : 0;
  return { bytes: weights + kvCache + overhead, weights, kv_cache: kvCache, overhead, basis };
}

/** The engine's copy of the weights: float32 on CPU for the torch engines unless `torch_dtype` says otherwise. */
function inMemoryWeights(shape: ModelShape, engine: string, kwargs: Record<string, unknown>, onGpu: boolean): number {
  if (shape.parameters === null || !TORCH_ENGINES.has(engine)) return shape.fileBytes;
  const dtype = typeof kwargs.torch_dtype === 'string' ? kwargs.torch_dtype : null;
  const bytes = dtype !== null && dtype !== 'auto' ? (DTYPE_BYTES[dtype] ?? 4) : onGpu || dtype === 'auto' ? shape.bytesPerParameter : 4;
  return Math.round(shape.parameters * bytes);
}

const WEIGHTLESS_ENGINES = new Set(['simulator', 'espeak', 'pocketsphinx', 'tesseract']);
const TORCH_ENGINES = new Set(['transformers', 'sentence_transformers', 'transformers_audio', 'transformers_image']);
const DTYPE_BYTES: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2, float64: 8 };

function kvCacheBytes(shape: ModelShape, resolved: ResolvedModel, kwargs: Record<string, unknown>, onGpu: boolean): number {
  const { layers, kvHeads, headDim } = shape;
  if (!layers || !kvHeads || !headDim) return 0;
  const trained = shape.contextLength ?? resolved.load.context_length ?? LLAMA_DEFAULT_MAX_CONTEXT;
  const registered = resolved.load.context_length ?? trained;
  const engine = resolved.runtimeEngine;
  let tokens: number;
  let bytesPerValue: number;
  if (engine === 'llama_cpp') {
    const nCtx = positiveInt(kwargs.n_ctx) ?? LLAMA_DEFAULT_MAX_CONTEXT;
    tokens = Math.min(registered, trained, nCtx) * (positiveInt(kwargs.n_parallel) ?? LLAMA_DEFAULT_PARALLEL);
    bytesPerValue = 2; // f16 cache, llama.cpp's default
  } else if (engine === 'vllm') {
    return 0; // vLLM takes its share of the GPU (gpu_memory_utilization), cache included: see memory-budget.ts
  } else {
    tokens = Math.min(registered, trained, positiveInt(kwargs.max_model_len) ?? TRANSFORMERS_KV_TOKENS);
    bytesPerValue = onGpu ? shape.bytesPerParameter : 4;
  }
  return tokens * layers * kvHeads * headDim * 2 * bytesPerValue;
}

/** Every count of a shape is a finite number from 0 (or unknown): a NaN weight left a model out of the budget. */
function saneShape(shape: ModelShape): boolean {
  const counts = [shape.parameters, shape.fileBytes, shape.layers, shape.kvHeads, shape.headDim, shape.contextLength, shape.bytesPerParameter];
  return counts.every((n) => n === null || (Number.isFinite(n) && n >= 0));
}

function positiveInt(value: unknown): number | null {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** The model's shape from its files (a local folder or file, or the hub cache), else the hub's listing, else the catalog. */
async function modelShape(input: EstimateInput): Promise<{ shape: ModelShape; basis: 'files' | 'hub' | 'catalog' } | null> {
  const local = await localFiles(input);
  if (local) {
    const shape = await shapeOf(local, input.resolved);
    if (shape && saneShape(shape)) return { shape, basis: 'files' };
  }
  // Not downloaded yet (and no local path): the hub's own listing, if it answers in time.
  if (input.hub && !input.modelPath && !input.resolved.load.model_uri) {
    const shape = await hubShape(input.resolved, input.hub).catch(() => null);
    if (shape && saneShape(shape)) return { shape, basis: 'hub' };
  }
  const billions = input.resolved.load.model_size_in_billions;
  const parameters = billions !== undefined ? modelSizeValue(billions) * 1e9 : Number.NaN;
  if (!Number.isFinite(parameters) || parameters <= 0) return null;
  const perParameter = catalogBytesPerParameter(input.resolved.load.model_format, input.resolved.load.quantization);
  return {
    basis: 'catalog',
    shape: { parameters: perParameter >= 2 ? parameters : null, bytesPerParameter: Math.max(perParameter, 2), fileBytes: Math.round(parameters * perParameter), layers: null, kvHeads: null, headDim: null, contextLength: null },
  };
}

/** The checkpoint's bytes per parameter as the catalog names its format and quantization. */
function catalogBytesPerParameter(format: string | undefined, quantization: string | undefined): number {
  const q = (quantization ?? 'none').toLowerCase();
  if (format?.startsWith('gguf')) {
    if (/^(f32|fp32)$/.test(q)) return 4;
    if (/^(f16|fp16|bf16)$/.test(q)) return 2;
    const bits = /q(\d)/.exec(q)?.[1] ?? /iq(\d)/.exec(q)?.[1];
    // k-quants and i-quants carry scales: about half a bit per weight more.
    return bits ? (Number(bits) + 0.5) / 8 : 1;
  }
  if (/int4|4-?bit|awq|gptq|q4/.test(q)) return 0.55;
  if (/int8|8-?bit|fp8/.test(q)) return 1.05;
  return 2; // pytorch/safetensors checkpoints: bf16 or fp16
}

async function localFiles(input: EstimateInput): Promise<string | null> {
  const given = input.modelPath ?? input.resolved.load.model_uri;
  if (given) return (await stat(given).catch(() => null)) ? given : null;
  const id = input.resolved.load.model_id;
  if (!id) return null;
  if (input.resolved.load.model_hub === 'modelscope') {
    const folder = path.join(input.cacheDir, 'modelscope', 'models', ...id.split('/'));
    return (await stat(folder).catch(() => null)) ? folder : null;
  }
  const repo = path.join(input.cacheDir, 'huggingface', `models--${id.split('/').join('--')}`);
  const revision = input.resolved.load.model_revision ?? 'main';
  // The GGUF downloader keeps files under the revision's name; huggingface_hub under the commit a ref names.
  const named = path.join(repo, 'snapshots', revision);
  if (await stat(named).catch(() => null)) return named;
  const commit = (await readFile(path.join(repo, 'refs', revision), 'utf8').catch(() => '')).trim();
  const snapshot = commit ? path.join(repo, 'snapshots', commit) : null;
  return snapshot && (await stat(snapshot).catch(() => null)) ? snapshot : null;
}

async function shapeOf(target: string, resolved: ResolvedModel): Promise<ModelShape | null> {
  const info = await stat(target);
  if (info.isFile()) return target.toLowerCase().endsWith('.gguf') ? ggufShape(target) : fileOnly(info.size);
  if (resolved.runtimeEngine === 'llama_cpp') {
    const gguf = await ggufIn(target, resolved);
    return gguf ? ggufShape(gguf) : null;
  }
  return weightsOfFolder(target);
}

function fileOnly(bytes: number): ModelShape {
  return { parameters: null, bytesPerParameter: 2, fileBytes: bytes, layers: null, kvHeads: null, headDim: null, contextLength: null };
}

/**
 * The GGUF file a folder's launch loads: the quantization's (its first part, in a
 * folder of its own too), else, where the spec names no file, the largest (the
 * estimate errs high). A named file not here yet is null: another quantization of the
 * repo in the cache was taken for it, and its size with it.
 */
async function ggufIn(folder: string, resolved: ResolvedModel): Promise<string | null> {
  const wanted = ggufPartNames(resolved.load)[0] ?? ggufFileName(resolved.load);
  if (wanted) return (await stat(path.join(folder, wanted)).catch(() => null))?.isFile() ? path.join(folder, wanted) : null;
  const names = (await readdir(folder).catch(() => [] as string[])).filter((n) => n.toLowerCase().endsWith('.gguf'));
  if (names.length === 0) return null;
  const q = (resolved.load.quantization ?? '').toLowerCase();
  const pick = q ? names.find((n) => n.toLowerCase().includes(q)) : undefined;
  if (pick) return path.join(folder, pick);
  let best: [string, number] | null = null;
  for (const name of names) {
    const size = (await stat(path.join(folder, name))).size;
    if (!best || size > best[1]) best = [name, size];
  }
  return path.join(folder, best![0]);
}

