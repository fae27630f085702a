import type { Runtime, RuntimeLauncher } from '../runtime/runtime.js';
import { buildLoadSpec } from './load-spec.js';
import type { ModelInstance } from './model-instance.js';
import type { Replica } from './replica.js';

/** Starts one replica's runtime (first launch or restart) and marks it READY. */
export async function startReplica(launcher: RuntimeLauncher, instance: ModelInstance, replica: Replica, cacheDir: string, signal: AbortSignal): Promise<Runtime> {
  replica.progress = 0;
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
