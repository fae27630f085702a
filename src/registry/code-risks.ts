import type { ModelType } from './model-type.js';
import type { ModelRecord } from './model-record.js';
import type { ResolvedModel } from './resolved-model.js';

/**
 * What in a registration or a launch makes the service run code of the caller's
 * choosing (docs/auth.md, "Running code"): the `python` launcher (it imports the
 * registered file), the `sklearn` launcher (it unpickles the registered file),
 * `trust_remote_code` (the model folder's own Python), and launch `envs` outside the
 * allow-list (`LD_PRELOAD`, `PYTHONPATH` and their kind load code into the runtime).
 * Each risk is a phrase for the 403 message and the audit log.
 */

const CODE_LAUNCHERS: Record<string, string> = {
  python: 'the python launcher (it runs the registered Python file)',
  sklearn: 'the sklearn launcher (it unpickles the registered file)',
};

/**
 * Launch `envs` that only tune or authenticate: hub tokens and options, CUDA and
 * NCCL, thread counts, and the engines' own settings. Anything else needs the power;
 * `LD_*`, `PYTHON*`, `PATH` and `HOME` never match.
 */
const ALLOWED_ENVS = [
  /^HF_[A-Z0-9_]+$/,
  /^HUGGING_FACE_HUB_TOKEN$/,
  /^MODELSCOPE_[A-Z0-9_]+$/,
  /^CUDA_[A-Z0-9_]+$/,
  /^NCCL_[A-Z0-9_]+$/,
  /^VLLM_[A-Z0-9_]+$/,
  /^(OMP|MKL|OPENBLAS)_NUM_THREADS$/,
  /^TOKENIZERS_PARALLELISM$/,
  /^PYTORCH_CUDA_ALLOC_CONF$/,
  /^TRANSFORMERS_(OFFLINE|VERBOSITY)$/,
];

/**
 * Variables of those families that choose where weights come from (`HF_ENDPOINT`), where
 * files are written (`HF_HOME`, `HF_HUB_CACHE`, `NCCL_DEBUG_FILE`, `VLLM_CACHE_ROOT`,
 * `CUDA_CACHE_PATH`, ...), what is loaded (`NCCL_NET_PLUGIN`, `CUDA_INJECTION64_PATH`:
 * a shared library by path) or read as configuration (`VLLM_LOGGING_CONFIG_PATH`: a
 * logging config names functions to call), or what is unpickled
 * (`VLLM_ALLOW_INSECURE_SERIALIZATION`). A hub of the caller's choosing picks each
 * file's bytes and, through huggingface_hub's cache layout (a blob is named by the
 * hub's ETag), where they land: a way to write files as the service's user.
 */
const REDIRECTING_ENVS = /^(HF|MODELSCOPE|CUDA|NCCL|VLLM)_[A-Z0-9_]*(ENDPOINT|DOMAIN|URL|HOME|CACHE|PATH|DIR|ROOT|FILE|PLUGIN|CONFIG|LIB|INSECURE)[A-Z0-9_]*$/;

export function envNeedsCodePower(name: string): boolean {
  return REDIRECTING_ENVS.test(name) || !ALLOWED_ENVS.some((pattern) => pattern.test(name));
}

/** Risks of a custom registration (what launching it will run). */
export function registrationCodeRisks(type: ModelType, record: ModelRecord): string[] {
  if (type !== 'flexible') return [];
  const flexible = record as { launcher?: string; launcher_args?: Record<string, unknown> | string };
  const risks: string[] = [];
  const launcher = flexible.launcher ? CODE_LAUNCHERS[flexible.launcher] : undefined;
  if (launcher) risks.push(launcher);
  // A record keeps its launcher_args as the JSON string Xinference's wire shape has (docs/registry.md).
  if (pythonTruthy(argsOf(flexible.launcher_args).trust_remote_code)) risks.push('trust_remote_code in launcher_args');
  return risks;
}

/** Risks of a launch: its model's launcher, trust_remote_code, and envs off the allow-list. */
export function launchCodeRisks(resolved: ResolvedModel, request: { envs: Record<string, string>; engine_kwargs: Record<string, unknown> }): string[] {
  const risks: string[] = [];
  const launcher = resolved.load.launcher ? CODE_LAUNCHERS[resolved.load.launcher] : undefined;
  if (launcher) risks.push(launcher);
  if (pythonTruthy(request.engine_kwargs.trust_remote_code) || pythonTruthy(resolved.load.launcher_args.trust_remote_code)) risks.push('trust_remote_code');
  const envs = Object.keys(request.envs).filter(envNeedsCodePower);
  if (envs.length > 0) risks.push(`launch envs ${envs.join(', ')} (only hub tokens and options, CUDA, NCCL, thread and engine settings are allowed without it; a hub endpoint, or a file, folder, plugin or configuration to read or write, is not)`);
  return risks;
}

/**
 * Whether the Python runtime reads a value as true: it passes `trust_remote_code` on
 * with Python's truthiness (`bool(...)`), so `"yes"`, `1` and even `"false"` trust the
 * folder's code there, and each needs the power here as `true` does.
 */
function pythonTruthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function argsOf(args: Record<string, unknown> | string | undefined): Record<string, unknown> {
  if (typeof args !== 'string') return args ?? {};
  try {
    const parsed: unknown = JSON.parse(args);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
