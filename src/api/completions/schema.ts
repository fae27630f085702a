import { z } from 'zod';
import { samplingShape } from '../llm/generate-config.js';

/** The most prompts one request may list, and the most choices (prompts × n) it may ask for. */
export const MAX_PROMPTS = 128;
export const MAX_CHOICES = 256;

/**
 * POST /v1/completions (OpenAI completions, contract §4). `prompt` is one string or, as
 * OpenAI and vLLM take it, a list of them: each prompt gets its `n` choices
 * (docs/openai-parameters.md). Token-id prompts are not taken: every engine here is
 * given text.
 */
export const completionBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  // The messages avoid the word "prompt": the error handler then puts the field's name first.
  prompt: z.union(
    [
      z.string(),
      z
        .array(z.string({ error: 'must be text (token-id lists are not supported)' }))
        .min(1, 'the list is empty: send at least one string')
        .max(MAX_PROMPTS, `a list of at most ${MAX_PROMPTS} strings`),
    ],
    { error: 'must be a string or a list of strings (token-id lists are not supported)' },
  ),
  ...samplingShape,
  echo: z.boolean().nullish(),
  // OpenAI's legacy completions: the number of alternatives per token, 0 to 5.
  logprobs: z.int().min(0).max(5).nullish(),
});
export type CompletionBody = z.infer<typeof completionBody>;
