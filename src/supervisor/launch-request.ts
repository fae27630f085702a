import path from 'node:path';
import type { ModelType } from '../registry/index.js';

/** A launch, after the HTTP layer has checked its shapes (contract §3.1). */
export interface LaunchRequest {
  model_name: string;
  model_type: ModelType;
  model_engine?: string | undefined;
  model_uid?: string | undefined;
  model_size_in_billions?: number | string | undefined;
  model_format?: string | undefined;
  quantization?: string | undefined;
  replica: number;
  /** `"auto"`: one GPU per replica if the machine has any; a number: that many; null: CPU only. */
  n_gpu: 'auto' | number | null;
  gpu_idx?: number[] | undefined;
  request_limits?: number | null | undefined;
  worker_ip?: string | undefined;
  model_path?: string | undefined;
  /** Take the spec from this hub, or fail (Xinference's `download_hub`). */
  download_hub?: 'huggingface' | 'modelscope' | undefined;
  /** HANGAR_MODEL_SRC's hub: its spec where the family has one, else another. */
  preferred_hub?: 'huggingface' | 'modelscope' | undefined;
  envs: Record<string, string>;
  peft_model_config?: unknown;
  /** Unload after this long idle (docs/on-demand.md): ms, or null for never; absent: the server's default. */
  keep_alive?: number | null | undefined;
  /** Launch even when the memory estimate does not fit the budget. */
  force?: boolean | undefined;
  /** Every other field of the body: keyword arguments for the engine. */
  engine_kwargs: Record<string, unknown>;
}

/**
 * What makes two launches "the same" for the idempotent-launch rule: every launch
 * parameter, with keys in a fixed order so that field order in the JSON body does not
 * matter. The uid itself is excluded (both launches name it).
 */
export function launchKey(request: LaunchRequest): string {
  // Neither changes what runs: a second launch that differs only in them is the same launch.
  const { model_uid: _uid, keep_alive: _keepAlive, force: _force, preferred_hub: _preferred, ...rest } = request;
  return stableStringify(rest);
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The launch with `model_path` made absolute, against the service's working folder
 * where the launch was checked: a runtime starts in its own folder, where a relative
 * path would name something else (or nothing).
 */
export function withAbsoluteModelPath(request: LaunchRequest): LaunchRequest {
  if (request.model_path === undefined || path.isAbsolute(request.model_path)) return request;
  return { ...request, model_path: path.resolve(request.model_path) };
}
