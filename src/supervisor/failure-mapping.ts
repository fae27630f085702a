import { HangarError } from '../errors/hangar-error.js';
import { RuntimeFailure } from '../runtime/runtime-failure.js';
import type { ModelInstance } from './model-instance.js';

/** A failed launch as the contract answers it (§3.1): 400 bad model, 499 cancelled, 503 no room on the cluster, 500 otherwise. */
export function launchFailure(instance: ModelInstance, cause: unknown): HangarError {
  if (cause instanceof HangarError) return cause;
  const name = instance.resolved.modelName;
  if (cause instanceof RuntimeFailure) {
    if (cause.kind === 'invalid') return new HangarError('model_load_invalid', [name, cause.message], { cause });
    // Not the model's fault and not for good: the hub was out of reach and the files are not cached.
    if (cause.kind === 'unavailable') return new HangarError('model_source_unreachable', [name, cause.message], { cause, headers: { 'retry-after': '30' } });
    if (cause.kind === 'cancelled') return new HangarError('launch_cancelled', [instance.uid], { cause });
    // Xinference's code for "no room for this model"; the message says what was asked and what is free.
    if (cause.kind === 'no_fit') return new HangarError('no_gpu_slot', [`${name}: ${cause.message}`], { cause });
    return new HangarError('model_load_failed', [name, cause.message], { cause });
  }
  return new HangarError('model_load_failed', [name, cause instanceof Error ? cause.message : String(cause)], { cause });
}

/** Why every model's lifetime ends when the service stops (Supervisor.shutdown): its calls say so. */
export const SERVER_SHUTDOWN = new Error('the server is shutting down');

/** A failed call: the engine's own words, with the status its kind deserves. */
export function callFailure(instance: ModelInstance, cause: unknown): HangarError {
  if (cause instanceof HangarError) return cause;
  if (cause instanceof RuntimeFailure) {
    switch (cause.kind) {
      case 'invalid':
        return new HangarError('inference_invalid_input', [cause.message], { cause, param: cause.param });
      case 'unknown_method':
        // The runtime's words name only its method; the client asked a model for something its engine does not do.
        return new HangarError('inference_invalid_input', [`model ${instance.uid} (engine ${instance.resolved.engine}) cannot answer this: ${cause.message}`], { cause, param: cause.param });
      case 'dead':
      case 'cancelled':
      case 'aborted':
        // Ended by a terminate: say so, not how its process ended.
        if (instance.lifetime.signal.aborted) {
          const why = instance.lifetime.signal.reason === SERVER_SHUTDOWN ? SERVER_SHUTDOWN.message : 'the model was terminated';
          return new HangarError('runtime_unavailable', [instance.uid, why], { cause });
        }
        return new HangarError('runtime_unavailable', [instance.uid, cause.message], { cause });
      case 'internal':
        return new HangarError('inference_failed', [cause.message], { cause });
    }
  }
  return new HangarError('inference_failed', [cause instanceof Error ? cause.message : String(cause)], { cause });
}
