import { existsSync } from 'node:fs';
import { checkModelDir } from '../config/model-dirs.js';
import { HangarError } from '../errors/hangar-error.js';
import { launchCodeRisks, type ResolvedModel } from '../registry/index.js';
import { allocateGpus } from './gpu-allocation.js';
import { withAbsoluteModelPath, type LaunchRequest } from './launch-request.js';
import { checkLoraAdapters } from './lora-adapters.js';
import type { ModelQuery } from './model-query.js';
import { validateModelUid } from './model-uid.js';

/** What a launch will run, settled before anything starts. */
export interface LaunchPlan {
  /** The request, its `model_path` made absolute. */
  request: LaunchRequest;
  resolved: ResolvedModel;
  /** Each replica's GPU indexes. */
  gpus: number[][];
}

export interface LaunchPlanContext {
  resolve: (query: ModelQuery) => ResolvedModel;
  gpuCount: number;
  /** `--model-dirs`: where a launch's `model_path` may be; null or absent: anywhere. */
  modelDirs?: readonly string[] | null;
}

/**
 * Every check a launch passes before a record or a process exists (contract §3.1): the
 * uid, the registration, what it would run (`authorize` refuses code the caller may
 * not run), its LoRA adapters, a `model_path` that exists inside `--model-dirs`, and
 * the GPUs it asks for. A refusal here leaves nothing behind.
 */
export function planLaunch(asked: LaunchRequest, context: LaunchPlanContext, authorize?: (risks: string[]) => void): LaunchPlan {
  const request = withAbsoluteModelPath(asked);
  if (request.model_uid !== undefined) validateModelUid(request.model_uid);
  const resolved = context.resolve(request);
  // The runtime reads it with Python's truthiness, where "false" is true: only a boolean says what it means.
  const trust = request.engine_kwargs.trust_remote_code;
  if (trust !== undefined && trust !== null && typeof trust !== 'boolean') {
    throw new HangarError('invalid_field', [`trust_remote_code: must be true or false, not ${JSON.stringify(trust)}`], { param: 'trust_remote_code' });
  }
  authorize?.(launchCodeRisks(resolved, request));
  checkLoraAdapters(request, resolved.engine, context.modelDirs ?? null);
  if (request.model_path !== undefined && !existsSync(request.model_path)) {
    throw new HangarError('model_path_not_found', [request.model_path], { param: 'model_path' });
  }
  // Registrations kept from before --model-dirs was set still load; launching one follows it.
  for (const [local, field] of [[request.model_path, 'model_path'], [resolved.load.model_uri, 'model_uri']] as const) {
    if (local !== undefined) checkModelDir(local, context.modelDirs ?? null, local, field);
  }
  return { request, resolved, gpus: allocateGpus(request, context.gpuCount) };
}
