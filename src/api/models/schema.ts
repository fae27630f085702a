import { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import { MAX_REPLICAS } from '../../supervisor/replica.js';

const required = (field: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? `Invalid input. Please specify the \`${field}\` field.` : undefined;

/** POST /v1/models body (contract §3.1). Unknown fields are engine keyword arguments. */
export const launchBody = z.looseObject({
  model_name: z.string({ error: required('model_name') }).min(1, 'Invalid input. Please specify the `model_name` field.'),
  model_type: z.string().default('LLM'),
  model_engine: z.string().min(1).nullish(),
  model_uid: z.string().nullish(),
  model_size_in_billions: z.union([z.number().positive(), z.string().min(1)]).nullish(),
  model_format: z.string().nullish(),
  quantization: z.string().nullish(),
  replica: z.int().min(1).max(MAX_REPLICAS).default(1),
  n_gpu: z.union([z.literal('auto'), z.int(), z.null()], { error: 'must be "auto", an integer, or null' }).default('auto'),
  gpu_idx: z.union([z.int().min(0), z.array(z.int().min(0))]).nullish(),
  request_limits: z.int().min(0, 'The `request_limits` parameter must be greater or equal than 0.').nullish(),
  worker_ip: z.string().nullish(),
  model_path: z.string().min(1).nullish(),
  // What a process environment can hold: a name with no `=` (it would split into another
  // variable) and nothing with a NUL byte (the runtime's spawn failed as an unexplained 500).
  envs: z
    .record(
      z.string().regex(/^[^=\0]+$/, 'an environment variable name must be non-empty, with no `=` and no NUL byte'),
      z.string().regex(/^[^\0]*$/, 'an environment variable value may not hold a NUL byte'),
    )
    .nullish(),
  // Xinference's shape; no engine here loads adapters yet, so the supervisor refuses a
  // non-empty list by name instead of serving the base model in silence.
  peft_model_config: z
    .object({
      lora_list: z.array(z.object({ lora_name: z.string().min(1), local_path: z.string().min(1) }).loose()).nullish(),
      image_lora_load_kwargs: z.record(z.string(), z.unknown()).nullish(),
      image_lora_fuse_kwargs: z.record(z.string(), z.unknown()).nullish(),
    })
    .loose()
    .nullish(),
  n_worker: z.int().min(1).nullish(),
  // The hubs the runtimes download from; Xinference's openmind_hub and csghub are not among them.
  download_hub: z.enum(['huggingface', 'modelscope'], { error: 'must be huggingface or modelscope' }).nullish(),
  // docs/on-demand.md: unload after this long idle ("5m", seconds, 0, -1 for never), and launch past the memory budget.
  keep_alive: z.union([z.string(), z.number()]).nullish(),
  force: z.boolean({ error: 'must be true or false' }).nullish(),
});
export type LaunchBody = z.infer<typeof launchBody>;

// What FastAPI (pydantic) reads as a boolean query value, any case: Xinference's client
// sends Python's `False` (requests writes `?wait_ready=False`).
const TRUE_WORDS = ['true', '1', 'yes', 'y', 'on', 't'];
const BOOL_WORDS = [...TRUE_WORDS, 'false', '0', 'no', 'n', 'off', 'f'] as const;

export const launchQuery = z.object({
  wait_ready: z
    .preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), z.enum(BOOL_WORDS))
    .default('true')
    .transform((v) => TRUE_WORDS.includes(v)),
});

export const uidParams = z.object({ model_uid: z.string() });
// Digits only: a coerced number read ' ' as 0 and '0x1' as 1, and removed a replica nobody named.
export const replicaParams = z.object({ model_uid: z.string(), replica_id: z.string().regex(/^\d{1,9}$/, 'must be a replica id: a whole number from 0, in digits').transform(Number) });

export const instancesQuery = z.object({
  model_name: z.string().optional(),
  model_uid: z.string().optional(),
});

/** POST /v1/models/instance (Xinference): a launch named by a model_version of GET /v1/models/{type}/{name}/versions. */
export const launchByVersionBody = z.object({
  model_version: z.string({ error: (issue) => (issue.input === undefined ? 'is required: a model_version from GET /v1/models/{model_type}/{model_name}/versions' : undefined) }).min(1).max(512),
  model_type: z.string().default('LLM'),
  model_engine: z.string().min(1).nullish(),
  model_uid: z.string().nullish(),
  replica: z.int().min(1).max(MAX_REPLICAS).default(1),
  n_gpu: z.union([z.literal('auto'), z.int(), z.null()], { error: 'must be "auto", an integer, or null' }).default('auto'),
});

/**
 * `<name>--<size>B--<format>--<quantization>` for LLMs (sizes spell `.` as `_`), the
 * bare name for other types: the launch fields it stands for.
 */
export function fieldsOfVersion(modelType: string, version: string): Pick<LaunchBody, 'model_name' | 'model_size_in_billions' | 'model_format' | 'quantization'> {
  const parts = version.split('--');
  if (modelType !== 'LLM' || parts.length === 1) return { model_name: version };
  if (parts.length !== 4 || !/^\d+(_\d+)?B$/i.test(parts[1]!)) {
    throw new HangarError('invalid_field', [`model_version: ${JSON.stringify(version)} is not <name>--<size>B--<format>--<quantization>`], { param: 'model_version' });
  }
  return { model_name: parts[0]!, model_size_in_billions: parts[1]!.slice(0, -1).replace('_', '.'), model_format: parts[2]!, quantization: parts[3]! };
}
