import { z } from 'zod';
import { flatSpecSchema, modelSizeSchema, modelSrcSchema, nullableString, stringList } from './common.js';

/** Xinference's LLM abilities (notes §6). */
export const LLM_ABILITIES = ['generate', 'chat', 'tools', 'vision', 'audio', 'omni', 'reasoning', 'hybrid', 'embed'] as const;

const familyFields = {
  version: z.literal(2).default(2),
  model_name: z.string().min(1),
  model_lang: stringList.min(1),
  model_ability: z.array(z.enum(LLM_ABILITIES)).min(1),
  model_description: nullableString,
  // Xinference's default when a family does not say (notes §8.2).
  context_length: z.number().int().positive().default(2048),
  model_family: nullableString,
  chat_template: nullableString,
  // Xinference's fields are Optional: its own custom-model template sends null for both.
  stop_token_ids: z.array(z.number().int().nonnegative()).nullish().transform((v) => v ?? []),
  stop: z.array(z.string()).nullish().transform((v) => v ?? []),
  reasoning_start_tag: nullableString,
  reasoning_end_tag: nullableString,
  tool_parser: nullableString,
};

export const llmSpecSchema = flatSpecSchema.extend({ model_size_in_billions: modelSizeSchema });
export type LlmSpec = z.output<typeof llmSpecSchema>;

/** The flattened record: what the REST API shows and what launch resolution reads. */
export const llmRecordSchema = z.looseObject({ ...familyFields, model_specs: z.array(llmSpecSchema).min(1) });
export type LlmRecord = z.output<typeof llmRecordSchema>;

/** A built-in file: specs in the compact `model_src` form (notes §8.2). */
export const llmBuiltinSchema = z.looseObject({
  ...familyFields,
  model_specs: z
    .array(z.looseObject({ model_format: z.string().min(1), model_size_in_billions: modelSizeSchema, model_src: modelSrcSchema }))
    .min(1),
});

/**
 * A custom definition: flattened specs with a singular `quantization`, as Xinference
 * 2.0's custom LLM class wants, plus its two extra rules (notes §8.3).
 */
export const llmCustomSchema = z.looseObject({
  ...familyFields,
  version: z.literal(2, { error: 'custom LLM definitions need "version": 2' }),
  model_family: z.string({ error: 'You must specify `model_family` when registering custom LLM models.' }).min(1),
  model_specs: z.array(llmSpecSchema).min(1),
});
