import { z } from 'zod';

/**
 * Field schemas shared by every model type's record. The record shapes are
 * Xinference 2.0's (notes §8.2), so a definition exported from Xinference registers
 * here unchanged.
 */

/**
 * Xinference's name rule (notes §8.3); `+ / ? % # & =` and whitespace would break URLs
 * and file names, and so would control characters (C0, DEL, C1; a NUL cannot be in a file name).
 */
export const MODEL_NAME_PATTERN = /^[^+/?%#&=\s\x00-\x1f\x7f-\x9f]+$/;

/** The hubs the runtime can download from. */
export const MODEL_HUBS = ['huggingface', 'modelscope'] as const;
export const modelHubSchema = z.enum(MODEL_HUBS);

/**
 * Sizes are numbers, or strings with `_` for the decimal point (`"0_5"` = 0.5), the
 * way Xinference writes them so the value can sit in a version string such as
 * `qwen2.5-instruct--0_5B--pytorch--none`. Kept as given; compared by value.
 */
export const modelSizeSchema = z.union([
  z.number().positive(),
  z.string().regex(/^\d+(_\d+)?$/, 'must be a number, or digits with "_" for the decimal point such as "0_5"'),
]);

export const nullableString = z.string().nullable().default(null);

export const stringList = z.array(z.string().min(1));

/** Free-form engine defaults (`default_model_config` and friends): any JSON object. */
export const configObject = z.record(z.string(), z.unknown());

/**
 * One flattened spec of an LLM, embedding or rerank family: one hub and one
 * quantization (notes §8.2). Extra keys (gguf file templates, activated size) are kept.
 */
export const flatSpecSchema = z.looseObject({
  model_format: z.string().min(1),
  quantization: z.string().min(1).default('none'),
  model_id: nullableString,
  model_hub: modelHubSchema.nullable().default('huggingface'),
  model_uri: nullableString,
  model_revision: nullableString,
});
export type FlatSpec = z.output<typeof flatSpecSchema>;

/**
 * The compact on-disk spec source of built-in files: per hub, the id and the list
 * of quantizations that `flatten` expands into one spec each.
 */
export const hubSourceSchema = z.looseObject({
  model_id: z.string().min(1),
  quantizations: z.array(z.string().min(1)).min(1).default(['none']),
  model_revision: z.string().nullable().optional(),
});
export const modelSrcSchema = z.partialRecord(modelHubSchema, hubSourceSchema);
