import type { ReplicaSnapshot } from './lifecycle-events.js';
import type { ModelInstance } from './model-instance.js';

/** Every replica with a runtime now, for gauges read at scrape time. */
export function replicaSnapshots(instances: Iterable<ModelInstance>): ReplicaSnapshot[] {
  const out: ReplicaSnapshot[] = [];
  for (const instance of instances) {
    for (const replica of instance.replicas) {
      const runtime = replica.runtime;
      if (!runtime || replica.status !== 'READY') continue;
      out.push({
        modelUid: instance.uid,
        modelName: instance.resolved.modelName,
        modelType: instance.resolved.modelType,
        replica: replica.uid,
        pid: runtime.pid,
        local: runtime.node === undefined,
        gpuIndexes: replica.gpuIndexes,
        gpuMemoryBytes: replica.gpuMemoryBytes,
        pendingCalls: runtime.pendingCalls,
        stats: runtime.stats,
      });
    }
  }
  return out;
}
