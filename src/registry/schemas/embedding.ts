import { z } from 'zod';
import { flatSpecSchema, modelSrcSchema, stringList } from './common.js';

const familyFields = {
  version: z.literal(2).default(2),
  model_name: z.string().min(1),
  dimensions: z.number().int().positive(),
  max_tokens: z.number().int().positive(),
  language: stringList.min(1),
};

export const embeddingRecordSchema = z.looseObject({ ...familyFields, model_specs: z.array(flatSpecSchema).min(1) });
export type EmbeddingRecord = z.output<typeof embeddingRecordSchema>;

export const embeddingBuiltinSchema = z.looseObject({
  ...familyFields,
  model_specs: z.array(z.looseObject({ model_format: z.string().min(1), model_src: modelSrcSchema })).min(1),
});

export const embeddingCustomSchema = embeddingRecordSchema;
