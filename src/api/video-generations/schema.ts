import { z } from 'zod';

/** POST /v1/video/generations (contract §4). */
export const videoGenerationBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  prompt: z.string().min(1, 'must not be empty'),
  negative_prompt: z.string().nullish(),
  n: z.int().min(1).max(4).default(1),
  response_format: z.enum(['url', 'b64_json']).default('url'),
  kwargs: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  user: z.string().nullish(),
});
