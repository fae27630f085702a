import { z } from 'zod';

export const typeParams = z.object({ model_type: z.string() });
export const typeNameParams = z.object({ model_type: z.string(), model_name: z.string() });
export const engineParams = z.object({ model_name: z.string() });

export const listQuery = z.object({
  detailed: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
});

/**
 * POST /v1/model_registrations/{type}: `model` is the definition as a JSON string
 * (Xinference's shape) or, ours, as an object. `persist` defaults to true: a user who
 * leaves it out expects the model to still be there tomorrow.
 */
export const registerBody = z.object({
  model: z.union([z.string(), z.record(z.string(), z.unknown())], {
    error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : 'must be the model definition, as a JSON string or an object'),
  }),
  persist: z.boolean().default(true),
  worker_ip: z.string().nullish(),
});
