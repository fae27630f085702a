import { InvalidInput } from '../invalid-input.js';

/** How many calls one replica runs at once by default: the Transformers engine's max_batch_size. */
export const DEFAULT_PARALLEL = 8;
/**
 * The largest context per sequence by default. llama.cpp allocates the KV cache for
 * every sequence up front, so a registration's 32k or 128k context times 8 sequences
 * would not fit most hosts; `n_ctx` asks for more (node-llama-cpp then shrinks it to
 * what memory allows, at least this).
 */
export const DEFAULT_MAX_CONTEXT = 8192;

/**
 * The launch options the llama.cpp engine reads (Xinference's llama.cpp names):
 * `n_ctx` (context per sequence), `n_parallel` (sequences: calls generating at
 * once), `n_gpu_layers` (layers offloaded to a GPU, -1 all: the default with GPUs),
 * `n_threads` (CPU threads). The control plane checks them at launch
 * (src/registry/llama-cpp-options.ts); the runtime checks them again. Other extra
 * launch fields (generic ones such as `device`) are not this engine's and pass.
 */
export interface EngineOptions {
  nCtx: number | null;
  nParallel: number;
  nGpuLayers: number | null;
  nThreads: number | null;
}

export function parseEngineOptions(raw: unknown): EngineOptions {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidInput('engine_kwargs must be a map');
  const given = raw as Record<string, unknown>;
  const int = (key: string, minimum: number): number | null => {
    let value = given[key];
    if (value === undefined || value === null) return null;
    // The CLI passes `--n-ctx 4096` on as "4096".
    if (typeof value === 'string' && value.trim() !== '') value = Number(value);
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
      throw new InvalidInput(`engine_kwargs.${key} must be an integer of at least ${minimum}, got ${JSON.stringify(value)}`);
    }
    return value;
  };
  return { nCtx: int('n_ctx', 1), nParallel: int('n_parallel', 1) ?? DEFAULT_PARALLEL, nGpuLayers: int('n_gpu_layers', -1), nThreads: int('n_threads', 1) };
}
