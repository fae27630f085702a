import type { LlamaModel } from 'node-llama-cpp';

/** How many tokens the model's vocabulary has (ids 0 to this − 1), from the GGUF's token list or its declared size. */
export function vocabularySize(model: LlamaModel): number {
  const tokens = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown } } }).tokenizer?.ggml?.tokens;
  if (Array.isArray(tokens)) return tokens.length;
  const declared = (model.fileInfo.architectureMetadata as { vocab_size?: unknown }).vocab_size;
  return typeof declared === 'number' ? declared : Number.MAX_SAFE_INTEGER;
}
