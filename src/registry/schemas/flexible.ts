import { z } from 'zod';
import { configObject, hubModelId, hubRevision, modelHubSchema, nullableString } from './common.js';

/**
 * Flexible models have no built-ins (notes §8.1). `launcher_args` is a JSON *string*
 * in Xinference's shape; the record keeps it a string so the wire stays the same,
 * and launch resolution hands the runtime the parsed object.
 */
export const flexibleRecordSchema = z.looseObject({
  version: z.literal(2).default(2),
  model_name: z.string().min(1),
  model_description: nullableString,
  model_id: hubModelId.nullable().default(null),
  model_hub: modelHubSchema.default('huggingface'),
  model_revision: hubRevision.nullable().default(null),
  model_uri: z.string({ error: 'a flexible model needs model_uri: the file or folder its launcher loads' }).min(1),
  launcher: z.string().min(1),
  launcher_args: z.string().default('{}'),
});
export type FlexibleRecord = z.output<typeof flexibleRecordSchema>;

/** As received: `launcher_args` may also be an object *(ours)*, like `model` itself. */
export const flexibleCustomSchema = flexibleRecordSchema.extend({
  launcher_args: z.union([z.string(), configObject]).default('{}'),
});
