import { z } from 'zod';
import { samplingShape, streamOptionsNeedStream } from '../llm/generate-config.js';

/** The most prompts one request may list, and the most choices (prompts × n) it may ask for. */
export const MAX_PROMPTS = 128;
export const MAX_CHOICES = 256;

/** The largest token id a prompt may hold: far above any vocabulary; the engine checks its own. */
const MAX_TOKEN_ID = 2 ** 31 - 1;

/** Why `value` is not a token id, or null when it is one. */
function notTokenId(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be a token id (an integer from 0)';
  if (value < 0) return 'a token id is never negative';
  return value > MAX_TOKEN_ID ? `a token id is at most ${MAX_TOKEN_ID}` : null;
}

/**
 * A list prompt, typed by its first element as OpenAI's and vLLM's servers read it:
 * strings, token ids (one prompt), or token-id lists; every element must be of that kind.
 */
const listPrompt = z
  .array(z.unknown())
  .min(1, 'the list is empty')
  .superRefine((list, ctx) => {
    const fail = (path: Array<string | number>, message: string): void => void ctx.addIssue({ code: 'custom', path, message });
    if (typeof list[0] === 'string') {
      if (list.length > MAX_PROMPTS) return fail([], `a list of at most ${MAX_PROMPTS} entries`);
      const i = list.findIndex((p) => typeof p !== 'string');
      if (i >= 0) fail([i], 'must be text, as the first prompt of the list is');
    } else if (Array.isArray(list[0])) {
      if (list.length > MAX_PROMPTS) return fail([], `a list of at most ${MAX_PROMPTS} entries`);
      list.forEach((p, i) => {
        if (!Array.isArray(p)) return fail([i], 'must be a list of token ids, as the first prompt of the list is');
        if (p.length === 0) return fail([i], 'the token list is empty: send at least one token id');
        const j = p.findIndex((t) => notTokenId(t) !== null);
        if (j >= 0) fail([i, j], notTokenId(p[j])!);
      });
    } else {
      const j = list.findIndex((t) => notTokenId(t) !== null);
      if (j >= 0) fail([j], notTokenId(list[j])!);
    }
  });

/**
 * POST /v1/completions (OpenAI completions, contract §4). `prompt` is what OpenAI and
 * vLLM take: one string, a list of strings, one list of token ids, or a list of such
 * lists. Each prompt of a list gets its `n` choices (docs/openai-parameters.md). Token
 * ids go to the model as they are (no special token is added), as vLLM gives them.
 */
export const completionBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  // The messages avoid the word "prompt": the error handler then puts the field's name first.
  prompt: z.union([z.string(), listPrompt as z.ZodType<string[] | number[] | number[][]>]),
  ...samplingShape,
  echo: z.boolean().nullish(),
  // The number of alternatives per token: OpenAI's legacy API takes 0 to 5, vLLM to its
  // max_logprobs (20 by default), which lm-evaluation-harness's older versions send (10).
  logprobs: z.int().min(0).max(20).nullish(),
}).refine(...streamOptionsNeedStream);
export type CompletionBody = z.infer<typeof completionBody>;
