import { z } from 'zod';

/** POST /v1/rerank (contract §4, Xinference's shape). */
export const rerankBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  query: z.string({ error: 'must be a string' }),
  documents: z.array(z.string()).min(1, 'must list at least one document'),
  top_n: z.int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
  return_len: z.boolean().nullish(),
  max_chunks_per_doc: z.int().min(1).nullish(),
  truncate: z.boolean().nullish(),
  /** Xinference sends extra engine arguments as a JSON string. */
  kwargs: z.string().nullish(),
});
export type RerankBody = z.infer<typeof rerankBody>;
