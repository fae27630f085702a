import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { openRegular, readRegularText } from './regular-file.js';
import { fileSource, readGgufMetadata, type GgufScalar } from './gguf-header.js';

/** What the memory estimate needs to know of a model, read from its files. */
export interface ModelShape {
  /** Parameter count from the tensors' shapes; null where the files do not say (GGUF, pickles). */
  parameters: number | null;
  /** The checkpoint's own bytes per parameter (bf16: 2). */
  bytesPerParameter: number;
  /** The weight files' bytes on disk. */
  fileBytes: number;
  layers: number | null;
  kvHeads: number | null;
  headDim: number | null;
  /** The context the model was trained for. */
  contextLength: number | null;
}

const SAFETENSORS_DTYPE_BYTES: Record<string, number> = {
  F64: 8, I64: 8, U64: 8, F32: 4, I32: 4, U32: 4, F16: 2, BF16: 2, I16: 2, U16: 2, F8_E4M3: 1, F8_E5M2: 1, I8: 1, U8: 1, BOOL: 1,
};
/** A safetensors header larger than this is not one (the format caps it at 100 MB). */
const MAX_HEADER = 100 * 1024 * 1024;
/** Other frameworks' weights, used only where a folder has no safetensors. */
const OTHER_WEIGHTS = /\.(bin|pt|pth|ckpt|joblib|pkl|onnx|h5|msgpack)$/i;

/**
 * A Transformers-style folder: parameters from the safetensors headers (each tensor's
 * dtype and shape; nothing else of the file is read), layers and heads from
 * config.json. Without safetensors, the other weight files' sizes.
 */
export async function weightsOfFolder(folder: string): Promise<ModelShape | null> {
  const files = (await walk(folder)).filter((f) => loadedByTransformers(path.relative(folder, f.file)));
  const every = files.filter((f) => f.file.endsWith('.safetensors'));
  // A Mistral-style `consolidated` copy beside the shards: the engine reads one of the two.
  const safetensors = every.some((f) => !isConsolidated(f.file)) ? every.filter((f) => !isConsolidated(f.file)) : every;
  let parameters: number | null = null;
  let weightBytes = 0;
  let fileBytes = 0;
  if (safetensors.length > 0) {
    parameters = 0;
    for (const { file, bytes } of safetensors) {
      const header = await safetensorsHeader(file);
      fileBytes += bytes;
      if (!header) {
        parameters = null;
        break;
      }
      parameters += header.parameters;
      weightBytes += header.bytes;
    }
  } else {
    for (const { bytes } of files.filter((f) => OTHER_WEIGHTS.test(f.file))) fileBytes += bytes;
  }
  if (fileBytes === 0) return null;
  const config = await readJson(path.join(folder, 'config.json'));
  return { parameters, bytesPerParameter: parameters ? weightBytes / parameters : 2, fileBytes, ...configShape(config) };
}

/** Layers, KV heads, head size and trained context from a Transformers config.json (its text model's, for a multimodal one). */
export function configShape(config: Record<string, unknown> | null): Pick<ModelShape, 'layers' | 'kvHeads' | 'headDim' | 'contextLength'> {
  const text = (config?.text_config as Record<string, unknown> | undefined) ?? config ?? {};
  const num = (...keys: string[]): number | null => {
    for (const key of keys) {
      const v = text[key] ?? config?.[key];
      if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
    }
    return null;
  };
  const heads = num('num_attention_heads', 'n_head');
  const hidden = num('hidden_size', 'n_embd', 'd_model');
  return {
    layers: num('num_hidden_layers', 'n_layer', 'num_layers'),
    kvHeads: num('num_key_value_heads') ?? heads,
    headDim: num('head_dim') ?? (heads && hidden ? hidden / heads : null),
    contextLength: num('max_position_embeddings', 'n_positions', 'max_seq_len'),
  };
}

/** Parameters and bytes of one safetensors file from its header (8-byte length, then JSON); null if it is not one. */
export async function safetensorsHeader(file: string): Promise<{ parameters: number; bytes: number } | null> {
  const handle = await openRegular(file);
  if (!handle) return null;
  try {
    const prefix = Buffer.alloc(8);
    if ((await handle.read(prefix, 0, 8, 0)).bytesRead < 8) return null;
    const length = Number(prefix.readBigUInt64LE(0));
    if (length <= 0 || length > MAX_HEADER) return null;
    const raw = Buffer.alloc(length);
    if ((await handle.read(raw, 0, length, 8)).bytesRead < length) return null;
    const header = JSON.parse(raw.toString('utf8')) as Record<string, { dtype?: string; shape?: number[] }>;
    let parameters = 0;
    let bytes = 0;
    for (const [name, tensor] of Object.entries(header)) {
      if (name === '__metadata__' || !Array.isArray(tensor?.shape)) continue;
      // A dimension that is no count (`"abc"`, -1e9) makes the file's size unknown, not NaN or negative.
      if (!tensor.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) return null;
      const count = tensor.shape.reduce((a, b) => a * b, 1);
      parameters += count;
      bytes += count * (SAFETENSORS_DTYPE_BYTES[tensor.dtype ?? ''] ?? 2);
    }
    return { parameters, bytes };
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

/**
 * A GGUF file's shape from its metadata (the header only, within its limits:
 * gguf-header.ts); the weights are the file's bytes, all parts of a split model.
 */
export async function ggufShape(file: string): Promise<ModelShape | null> {
  const info = await stat(file);
  if (!info.isFile()) return null;
  let fileBytes = info.size;
  const split = /^(.*)-(\d+)-of-(\d+)\.gguf$/i.exec(path.basename(file));
  if (split) {
    const siblings = await readdir(path.dirname(file));
    fileBytes = 0;
    for (const name of siblings) if (name.startsWith(`${split[1]}-`) && name.toLowerCase().endsWith(`-of-${split[3]}.gguf`)) fileBytes += (await stat(path.join(path.dirname(file), name))).size;
  }
  let meta = new Map<string, GgufScalar>();
  const source = await fileSource(file);
  try {
    meta = await readGgufMetadata(source, undefined, ggufShapeKnown);
  } catch {
    // Not readable as GGUF (or a header past the limit): the file's size is still the weights.
  } finally {
    await source.close();
  }
  return ggufShapeOf(meta, fileBytes);
}

/** A GGUF model's shape from its header's metadata (read from a file or the hub) and its files' bytes. */
export function ggufShapeOf(meta: ReadonlyMap<string, GgufScalar>, fileBytes: number): ModelShape {
  const arch = meta.get('general.architecture');
  const n = (key: string): number | null => {
    const v = meta.get(`${String(arch)}.${key}`);
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
  };
  const heads = n('attention.head_count');
  const embedding = n('embedding_length');
  return {
    parameters: null,
    bytesPerParameter: 2,
    fileBytes,
    layers: n('block_count'),
    kvHeads: n('attention.head_count_kv') ?? heads,
    headDim: n('attention.key_length') ?? (heads && embedding ? embedding / heads : null),
    contextLength: n('context_length'),
  };
}

/**
 * Before a key of the tokenizer (the vocabulary: nearly all of a header's bytes), once
 * the architecture's layer count is read: enough for `ggufShapeOf`. llama.cpp's
 * converter writes the architecture's keys first; a file that does not is read on.
 */
export function ggufShapeKnown(key: string, meta: ReadonlyMap<string, GgufScalar>): boolean {
  const arch = meta.get('general.architecture');
  return key.startsWith('tokenizer.') && typeof arch === 'string' && meta.has(`${arch}.block_count`);
}

/**
 * Whether the Transformers and vLLM engines load a file of a repository: not Meta's
 * original checkpoints (`original/`), a training run's checkpoints (`checkpoint-500/`),
 * nor a Mistral-style `consolidated` copy where the shards are there too (decided by
 * the caller: it needs the listing). A repository's weights were counted twice or three
 * times over, and a model that fits was refused.
 */
export function loadedByTransformers(relativePath: string): boolean {
  return !/^(original|checkpoint-[^/]*)\//.test(relativePath);
}

/** A Mistral-style single-file copy of the weights (`consolidated.safetensors`). */
export function isConsolidated(file: string): boolean {
  return /(^|\/)consolidated[^/]*\.safetensors$/.test(file);
}

/** The folder's regular files and their sizes (a link is followed to one: the hub's cache links its snapshots' files), three levels deep. */
async function walk(folder: string, depth = 0): Promise<Array<{ file: string; bytes: number }>> {
  if (depth > 3) return [];
  const out: Array<{ file: string; bytes: number }> = [];
  for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      out.push(...(await walk(full, depth + 1)));
      continue;
    }
    const info = await stat(full).catch(() => null);
    if (info?.isFile()) out.push({ file: full, bytes: info.size });
  }
  return out;
}

async function readJson(file: string): Promise<Record<string, unknown> | null> {
  const text = await readRegularText(file);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
