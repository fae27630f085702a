import { z } from 'zod';
import { numeric } from './numeric-option.js';

/**
 * The llama.cpp engine's launch options (Xinference's llama.cpp names; docs/runtime-protocol.md,
 * "llama_cpp"): context per sequence, sequences run at once, layers offloaded to a
 * GPU (-1: all) and CPU threads. The runtime checks them again
 * (src/llama-runtime/engine/engine-options.ts). Other extra fields pass, as for every engine.
 */
export const llamaCppOptions = z.looseObject({
  n_ctx: numeric(1, 16_777_216, true),
  n_parallel: numeric(1, 256, true),
  n_gpu_layers: numeric(-1, 100_000, true),
  n_threads: numeric(1, 4096, true),
});
