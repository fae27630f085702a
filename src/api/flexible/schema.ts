import { z } from 'zod';

/** POST /v1/flexible/infers: `{model, args: [...], ...kwargs}` (contract §4). */
export const flexibleInferBody = z.looseObject({
  model: z.string({ error: (i) => (i.input === undefined ? 'Invalid input. Please specify the `model` field.' : undefined) }).min(1),
  args: z.array(z.unknown()).default([]),
});
