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

/*
 * Names that become folders in the weights cache (`models--org--name/snapshots/<revision>`,
 * `modelscope/models/org/name`) and parts of file names: a registration's `..` or `/`
 * there wrote a download outside the cache. Every built-in id, revision and
 * quantization fits these rules.
 */
const noDotDot = (v: string) => !v.includes('..');

/** A hub repository, `org/name` or a bare `name`, in Hugging Face's letters (`A-Z a-z 0-9 _ . -`); `{quantization}` may stand in it. */
export const hubModelId = z
  .string()
  .regex(/^[\w.{}-]+(\/[\w.{}-]+)?$/, 'must be a hub repository id such as "org/name" (letters, digits, "_", ".", "-")')
  .refine(noDotDot, 'must not contain ".."');
/** A branch, tag or commit of a hub repository. */
export const hubRevision = z
  .string()
  .regex(/^[A-Za-z0-9][\w.-]*(\/[\w.-]+)*$/, 'must be a branch, tag or commit such as "main" (letters, digits, "_", ".", "-", "/")')
  .max(255)
  .refine(noDotDot, 'must not contain ".."');
/** A format or quantization name (`pytorch`, `Q4_K_M`, `4-bit`): one word, no path separator. */
export const specToken = z
  .string()
  .regex(/^[\w+-][\w.+-]*$/, 'must be one word (letters, digits, "_", ".", "+", "-")')
  .refine(noDotDot, 'must not contain ".."');

/**
 * A GGUF file's place in its repository, or a template of it (`BF16/QwQ-32B-{quantization}-{part}.gguf`):
 * folders allowed, but never absolute, never `..`, never a backslash. The runtime refused
 * such names at launch; the registration now says so, naming the field.
 */
export const repoFileTemplate = z
  .string()
  .refine((v) => !v.startsWith('/') && !v.includes('\\') && !v.includes('\0'), 'must be a path inside the repository (not absolute, no "\\")')
  .refine(noDotDot, 'must not contain ".."');

/** A split GGUF's part names by quantization (`{"Q2_K": ["00001-of-00003", ...]}`): each one word. */
export const quantizationParts = z.record(z.string(), z.array(z.string().regex(/^[\w.+-]+$/, 'must be one word (letters, digits, "_", ".", "+", "-")').refine(noDotDot, 'must not contain ".."')));

export const stringList = z.array(z.string().min(1));

/** Free-form engine defaults (`default_model_config` and friends): any JSON object. */
export const configObject = z.record(z.string(), z.unknown());

/**
 * One flattened spec of an LLM, embedding or rerank family: one hub and one
 * quantization (notes §8.2). Extra keys (gguf file templates, activated size) are kept.
 */
export const flatSpecSchema = z.looseObject({
  model_format: specToken,
  quantization: specToken.default('none'),
  model_id: hubModelId.nullable().default(null),
  model_hub: modelHubSchema.nullable().default('huggingface'),
  model_uri: nullableString,
  model_revision: hubRevision.nullable().default(null),
  model_file_name_template: repoFileTemplate.nullish(),
  model_file_name_split_template: repoFileTemplate.nullish(),
  quantization_parts: quantizationParts.nullish(),
});
export type FlatSpec = z.output<typeof flatSpecSchema>;

/**
 * The compact on-disk spec source of built-in files: per hub, the id and the list
 * of quantizations that `flatten` expands into one spec each.
 */
export const hubSourceSchema = z.looseObject({
  model_id: hubModelId,
  quantizations: z.array(specToken).min(1).default(['none']),
  model_revision: hubRevision.nullable().optional(),
});
export const modelSrcSchema = z.partialRecord(modelHubSchema, hubSourceSchema);
