import { parseKeepAlive } from '../../config/keep-alive.js';
import { HangarError } from '../../errors/hangar-error.js';
import { isModelType } from '../../registry/index.js';
import type { LaunchRequest } from '../../supervisor/launch-request.js';
import type { LaunchBody } from './schema.js';
import type { ModelSource } from '../../config/model-source.js';

/** Fields the launch itself uses; everything else in the body goes to the engine. */
const LAUNCH_FIELDS = new Set([
  'model_name', 'model_type', 'model_engine', 'model_uid', 'model_size_in_billions', 'model_format',
  'quantization', 'replica', 'n_gpu', 'gpu_idx', 'request_limits', 'worker_ip', 'model_path', 'envs',
  'peft_model_config', 'n_worker', 'download_hub', 'keep_alive', 'force',
]);

/** Turns a checked launch body into the supervisor's LaunchRequest, with Xinference's messages. */
export function toLaunchRequest(body: LaunchBody): LaunchRequest {
  if (!isModelType(body.model_type)) {
    throw new HangarError('unsupported_model_type', [body.model_type], { param: 'model_type' });
  }
  if (body.model_type === 'LLM' && !body.model_engine) {
    throw new HangarError('missing_model_engine', [], { param: 'model_engine' });
  }
  const engineKwargs: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!LAUNCH_FIELDS.has(key)) engineKwargs[key] = value;
  // Xinference: `device: "cpu"` forces CPU whatever n_gpu says.
  const nGpu = engineKwargs.device === 'cpu' ? null : body.n_gpu;
  return {
    model_name: body.model_name,
    model_type: body.model_type,
    model_engine: body.model_engine ?? undefined,
    model_uid: body.model_uid ?? undefined,
    model_size_in_billions: body.model_size_in_billions ?? undefined,
    model_format: body.model_format ?? undefined,
    quantization: body.quantization ?? undefined,
    replica: body.replica,
    n_gpu: nGpu,
    gpu_idx: body.gpu_idx === null || body.gpu_idx === undefined ? undefined : [body.gpu_idx].flat(),
    request_limits: body.request_limits ?? undefined,
    worker_ip: body.worker_ip ?? undefined,
    model_path: body.model_path ?? undefined,
    download_hub: body.download_hub ?? undefined,
    envs: body.envs ?? {},
    peft_model_config: body.peft_model_config ?? undefined,
    ...launchPolicy(body as Record<string, unknown>),
    engine_kwargs: engineKwargs,
  };
}

/**
 * The hub HANGAR_MODEL_SRC prefers, for a launch that names no `download_hub`: the
 * family's spec on that hub where it has one (docs/registry.md, "The hubs").
 */
export async function withPreferredHub(request: LaunchRequest, source: ModelSource): Promise<LaunchRequest> {
  if (request.download_hub) return request;
  const hub = await source.preferred();
  return hub ? { ...request, preferred_hub: hub } : request;
}

/** `keep_alive` and `force` (docs/on-demand.md), checked here so a bad one names its field. */
function launchPolicy(body: Record<string, unknown>): Pick<LaunchRequest, 'keep_alive' | 'force'> {
  const out: Pick<LaunchRequest, 'keep_alive' | 'force'> = {};
  if (body.keep_alive !== undefined && body.keep_alive !== null) {
    try {
      out.keep_alive = parseKeepAlive(body.keep_alive);
    } catch (err) {
      throw new HangarError('invalid_field', [(err as Error).message], { param: 'keep_alive' });
    }
  }
  if (body.force !== undefined && body.force !== null) {
    if (typeof body.force !== 'boolean') throw new HangarError('invalid_field', [`force must be true or false, got ${JSON.stringify(body.force)}`], { param: 'force' });
    out.force = body.force;
  }
  return out;
}
