import { z } from 'zod';
import { flatSpecSchema, modelSrcSchema, stringList } from './common.js';

const familyFields = {
  version: z.literal(2).default(2),
  model_name: z.string().min(1),
  // Xinference's default (notes §8.2); `normal` is a plain cross-encoder.
  type: z.string().min(1).default('unknown'),
  language: stringList.min(1),
  max_tokens: z.number().int().positive().nullable().default(null),
};

export const rerankRecordSchema = z.looseObject({ ...familyFields, model_specs: z.array(flatSpecSchema).min(1) });
export type RerankRecord = z.output<typeof rerankRecordSchema>;

export const rerankBuiltinSchema = z.looseObject({
  ...familyFields,
  model_specs: z.array(z.looseObject({ model_format: z.string().min(1), model_src: modelSrcSchema })).min(1),
});

export const rerankCustomSchema = rerankRecordSchema;
