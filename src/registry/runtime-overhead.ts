/**
 * A runtime process's own memory with a (tiny) model loaded: the interpreter, the
 * engine's libraries, allocator arenas. Measured as VmRSS of each runtime after its
 * first call, started cold (no warm spare), on the 2-core CI box (x86-64, torch CPU
 * build), 2026-11-26, with the test suite's tiny models, whose weights are under 1 MB
 * (docs/on-demand.md, "Memory estimate"). A runtime that took the warm spare also
 * holds torch and transformers (about 280 MiB more for the engines that do not import
 * them); its measured memory, which the budget counts once it is larger, shows that.
 * Engines marked "assumed" could not be measured here (they need a GPU or weights
 * this machine cannot fetch).
 */
const MIB = 1024 * 1024;

const OVERHEAD: Record<string, number> = {
  // torch + transformers imported (the warm spare imports them for every Python runtime).
  transformers: 460 * MIB,
  sentence_transformers: 460 * MIB,
  transformers_audio: 470 * MIB,
  transformers_image: 470 * MIB,
  // scikit-learn, scipy and joblib imported; a user's launcher may import as much.
  sklearn: 340 * MIB,
  python: 340 * MIB,
  // No model library at all (the simulator holds no weights; tesseract runs as a
  // process of its own per call); pocketsphinx holds its acoustic model.
  simulator: 50 * MIB,
  espeak: 50 * MIB,
  tesseract: 50 * MIB,
  pocketsphinx: 140 * MIB,
  // The Node runtime with node-llama-cpp's CPU binary (the vocabulary only) and its llama-server
  // (about 30 MiB beside the weights); in-process, where no server is built, about 105 MiB.
  llama_cpp: 120 * MIB,
  // Assumed: diffusers pulls in more than transformers; vLLM's host side (CUDA, its workers).
  diffusers: 700 * MIB,
  vllm: 2048 * MIB,
};

export function runtimeOverhead(runtimeEngine: string): number {
  return OVERHEAD[runtimeEngine] ?? 460 * MIB;
}
