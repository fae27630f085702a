import { z } from 'zod';
import { samplingShape } from '../llm/generate-config.js';

/** POST /v1/completions (OpenAI completions, contract §4). One prompt per request. */
export const completionBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  prompt: z.union([z.string(), z.array(z.string()).length(1, 'only one prompt per request is supported')], {
    error: 'must be a string (or a list holding one string)',
  }),
  ...samplingShape,
  echo: z.boolean().nullish(),
  // OpenAI's legacy completions: the number of alternatives per token, 0 to 5.
  logprobs: z.int().min(0).max(5).nullish(),
});
export type CompletionBody = z.infer<typeof completionBody>;
