import { z } from 'zod';

/** POST /v1/embeddings (OpenAI embeddings, contract §4). */
export const embeddingsBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  input: z.union(
    [
      z.string(),
      z.array(z.string()).min(1, 'must not be an empty list'),
      z.array(z.int().min(0)).min(1, 'must not be an empty list'),
      z.array(z.array(z.int().min(0)).min(1)).min(1, 'must not be an empty list'),
    ],
    { error: 'must be a string, a list of strings, a list of token ids, or a list of token-id lists' },
  ),
  dimensions: z.int().min(1).nullish(),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  /** Ours: an input longer than the model's max_tokens is cut (default, as Xinference) or refused (false). */
  truncate: z.boolean().nullish(),
  user: z.string().nullish(),
});
export type EmbeddingsBody = z.infer<typeof embeddingsBody>;

/** POST /v1/convert_ids_to_tokens (Xinference): token ids to the embedding model's tokens. */
export const convertIdsBody = z.object({
  model: z.string({ error: 'Invalid input. Please specify the `model` field.' }).min(1),
  input: z.union([z.array(z.int().min(0)).min(1), z.array(z.array(z.int().min(0))).min(1)], { error: 'must be a list of token ids, or a list of such lists' }),
  skip_special_tokens: z.boolean().default(false),
});
