import { z } from 'zod';

/**
 * The most inputs one embeddings request may carry: OpenAI's own cap. Without one, a 16 MiB
 * body of short strings is two million inputs: hours of a real encoder's time, every other
 * request of the model waiting, and a JSON answer of gigabytes (docs/openai-parameters.md).
 */
export const MAX_EMBEDDING_INPUTS = 2048;

const kindOf = (item: unknown): string => (typeof item === 'string' ? 'a string' : typeof item === 'number' ? 'a token id' : Array.isArray(item) ? 'a list of token ids' : item === null ? 'null' : `a ${typeof item}`);

/**
 * What is wrong with a list `input` that the union below would only call "expected
 * string" at its first item: a list that mixes kinds (`[1, 2, "a"]`: the fault is item
 * 2, not item 0), or a token id that is not a whole number from 0 (`[1.5]`).
 */
function listProblem(input: unknown): { path: number[]; message: string } | null {
  if (!Array.isArray(input) || input.length === 0) return null;
  const first = kindOf(input[0]);
  const isId = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    if (kindOf(item) !== first) return { path: [i], message: `the list mixes kinds: item 0 is ${first}, item ${i} ${kindOf(item)}; send all strings, all token ids, or all lists of token ids` };
    if (typeof item === 'number' && !isId(item)) return { path: [i], message: `token ids are whole numbers from 0, got ${item}` };
    if (Array.isArray(item)) {
      const bad = item.findIndex((id) => !isId(id));
      if (bad >= 0) return { path: [i, bad], message: `token ids are whole numbers from 0, got ${JSON.stringify(item[bad])}` };
    }
  }
  return null;
}

/** POST /v1/embeddings (OpenAI embeddings, contract §4). */
export const embeddingsBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  input: z.preprocess((value, ctx) => {
    const problem = listProblem(value);
    if (!problem) return value;
    ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
    return z.NEVER;
  }, z.union(
    [
      z.string(),
      z.array(z.string()).min(1, 'must not be an empty list'),
      z.array(z.int().min(0)).min(1, 'must not be an empty list'),
      z.array(z.array(z.int().min(0)).min(1)).min(1, 'must not be an empty list'),
    ],
    { error: 'must be a string, a list of strings, a list of token ids, or a list of token-id lists' },
  ).superRefine((input, ctx) => {
    // A flat list of token ids is one input; a list of strings or of id lists is one per item.
    const count = typeof input === 'string' || typeof input[0] === 'number' ? 1 : input.length;
    if (count > MAX_EMBEDDING_INPUTS) ctx.addIssue({ code: 'custom', message: `a list of at most ${MAX_EMBEDDING_INPUTS} items per request, got ${count}: send the rest in further requests` });
  })),
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
