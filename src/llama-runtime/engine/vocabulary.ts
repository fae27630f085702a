import type { LlamaModel, Token } from 'node-llama-cpp';
import { InvalidInput } from '../invalid-input.js';

/** How many tokens the model's vocabulary has (ids 0 to this − 1), from the GGUF's token list or its declared size. */
export function vocabularySize(model: LlamaModel): number {
  const tokens = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown } } }).tokenizer?.ggml?.tokens;
  if (Array.isArray(tokens)) return tokens.length;
  const declared = (model.fileInfo.architectureMetadata as { vocab_size?: unknown }).vocab_size;
  return typeof declared === 'number' ? declared : Number.MAX_SAFE_INTEGER;
}

/** Token ids as a request gives them (a prompt, or detokenize's `tokens`): each an integer in the vocabulary, or InvalidInput naming `field`. */
export function checkTokenIds(ids: readonly unknown[], vocabulary: number, field: string): Token[] {
  ids.forEach((token, i) => {
    if (typeof token !== 'number' || !Number.isInteger(token)) throw new InvalidInput(`${field}[${i}] must be a token id (an integer), got ${typeof token}`, field);
    if (token < 0 || token >= vocabulary) throw new InvalidInput(`${field}: token id ${token} (at ${i}) is outside this model's vocabulary (0 to ${vocabulary - 1})`, field);
  });
  return ids as Token[];
}

/** A token's text never covers more of a prompt than this many times its own bytes (as the Python runtime's TOKEN_BYTES_MARGIN). */
const TOKEN_BYTES_MARGIN = 4;

/** The longest token's text in UTF-8 bytes, from the GGUF's token list; 0 when it has none. */
export function maxTokenBytes(model: LlamaModel): number {
  const tokens = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown } } }).tokenizer?.ggml?.tokens;
  if (!Array.isArray(tokens)) return 0;
  let longest = 0;
  for (const token of tokens) if (typeof token === 'string') longest = Math.max(longest, Buffer.byteLength(token, 'utf8'));
  return longest;
}

/**
 * A prompt too long for the context whatever its tokens, found from its size alone:
 * tokenizing megabytes blocks this runtime's event loop, and every other request with
 * it. Null when it may fit (then tokenizing it costs at most about a context's worth).
 */
export function unfittingPrompt(text: string, contextLength: number, longestToken: number): string | null {
  if (longestToken <= 0) return null;
  const size = Buffer.byteLength(text, 'utf8');
  const atLeast = Math.floor(size / (longestToken * TOKEN_BYTES_MARGIN));
  if (atLeast < contextLength) return null;
  return `The prompt is ${size} bytes, so at least ${atLeast} tokens for this model, which leaves no room in the model's context of ${contextLength} tokens`;
}

/** As the Python runtime's PREFIX_CHARS_PER_TOKEN and PREFIX_SLACK (request_builder.py). */
const PREFIX_CHARS_PER_TOKEN = 8;
const PREFIX_SLACK = 8;

/**
 * For a long prompt, tokenizes only its start: when that alone fills the context, the
 * whole cannot fit, and the rest is never tokenized (a vocabulary of long tokens makes
 * the byte bound loose). Null when it may fit.
 */
export function longPrefix(text: string, contextLength: number, countTokens: (head: string) => number): string | null {
  const limit = PREFIX_CHARS_PER_TOKEN * contextLength;
  if (text.length <= limit) return null;
  const counted = countTokens(text.slice(0, limit));
  if (counted < contextLength + PREFIX_SLACK) return null;
  return `The prompt is ${text.length} characters, and its first ${limit} are already ${counted} tokens, which leaves no room in the model's context of ${contextLength} tokens`;
}
