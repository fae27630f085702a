import type { Runtime, RuntimeLauncher } from '../runtime/runtime.js';
import { RuntimeFailure } from '../runtime/runtime-failure.js';
import { buildLoadSpec } from './load-spec.js';
import type { ModelInstance } from './model-instance.js';
import type { Replica } from './replica.js';

/**
 * Starts one replica's runtime (first launch or restart) and marks it READY. Stopped,
 * as a cancelled launch is, by `signal` or by the replica's removal.
 */
export async function startReplica(launcher: RuntimeLauncher, instance: ModelInstance, replica: Replica, cacheDir: string, signal: AbortSignal): Promise<Runtime> {
  replica.progress = 0;
  signal = AbortSignal.any([signal, replica.removal.signal]);
  const runtime = await launcher.start({
    replicaUid: replica.uid,
    load: buildLoadSpec(instance, replica, cacheDir),
    envs: instance.request.envs,
    gpuIndexes: replica.gpuIndexes,
    cpuBound: instance.resolved.cpuBound,
    workerIp: instance.request.worker_ip,
    signal,
    onProgress: (p) => {
      replica.progress = p.progress;
    },
  });
  if (replica.removal.signal.aborted) {
    // Removed as its load ended: what started goes, and it is not READY (the removal
    // made it TERMINATING, from which READY is no move; that was a 500).
    await runtime.terminate();
    throw new RuntimeFailure('cancelled', `Replica ${replica.uid} was removed while it started`);
  }
  replica.runtime = runtime;
  // A new runtime (a restart after a death, say) starts with its weights loaded: a
  // sleeping model whose last sleeper came back this way holds its awake charge again.
  replica.asleep = false;
  if (instance.awakeCharge !== null && !instance.asleep) {
    instance.charge = instance.awakeCharge;
    instance.awakeCharge = null;
  }
  replica.progress = 1;
  replica.transition('READY');
  return runtime;
}
