import { z } from 'zod';
import { formNumber } from '../multipart/form-number.js';

const modelField = z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1);
/** OpenAI writes `1024x1024`, Xinference `1024*1024`. */
const sizeField = z.string().regex(/^\d{2,4}[x*]\d{2,4}$/, 'must look like 1024x1024').nullish();

/** POST /v1/images/generations (contract §4). */
export const imageGenerationBody = z.looseObject({
  model: modelField,
  prompt: z.string().min(1, 'must not be empty'),
  negative_prompt: z.string().nullish(),
  n: z.int().min(1).max(10).default(1),
  size: sizeField,
  response_format: z.enum(['url', 'b64_json']).default('url'),
  kwargs: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  user: z.string().nullish(),
});
export type ImageGenerationBody = z.output<typeof imageGenerationBody>;

/** Text fields of POST /v1/images/variations and /v1/images/edits (multipart; the source image's fields are in serving.ts). */
export const imageVariationFields = z.looseObject({
  model: modelField,
  // Required on /edits (serving.ts); a variation may have none (OpenAI's create_variation sends none, Xinference's is Form(None)).
  prompt: z.string().optional(),
  negative_prompt: z.string().optional(),
  n: formNumber(z.int().min(1).max(10)).default(1),
  size: z.union([z.enum(['original', 'auto']), z.string().regex(/^\d{2,4}[x*]\d{2,4}$/, 'must look like 1024x1024, or be original or auto')]).nullish(),
  stream: z.enum(['true', 'false', 'True', 'False']).optional(),
  response_format: z.enum(['url', 'b64_json']).default('url'),
  kwargs: z.string().optional(),
});
