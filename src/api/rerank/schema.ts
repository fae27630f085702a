import { z } from 'zod';

/**
 * The most documents one rerank request may score: Cohere's rerank API's cap. Each is a
 * cross-encoder pass over query and document, so an unbounded list holds the model for
 * as long as the body allows (docs/openai-parameters.md).
 */
export const MAX_RERANK_DOCUMENTS = 10_000;

/** POST /v1/rerank (contract §4, Xinference's shape). */
export const rerankBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  query: z.string({ error: 'must be a string' }),
  // A document is text, or `{"text": ...}` as Jina's and Cohere's (v1) clients send it.
  documents: z.array(z.union([z.string(), z.looseObject({ text: z.string() })], { error: 'must be a string or {"text": "..."}' }).transform((d) => (typeof d === 'string' ? d : d.text))).min(1, 'must list at least one document').max(MAX_RERANK_DOCUMENTS, `a list of at most ${MAX_RERANK_DOCUMENTS} items per request: rerank the rest in further requests`),
  top_n: z.int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
  return_len: z.boolean().nullish(),
  max_chunks_per_doc: z.int().min(1).nullish(),
  truncate: z.boolean().nullish(),
  /** Xinference sends extra engine arguments as a JSON string. */
  kwargs: z.string().nullish(),
});
export type RerankBody = z.infer<typeof rerankBody>;
