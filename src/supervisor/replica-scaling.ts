import type { LifecycleTimings } from '../config/config.js';
import { HangarError } from '../errors/hangar-error.js';
import type { Logger } from '../logging/logger.js';
import type { RuntimeLauncher } from '../runtime/runtime.js';
import { launchFailure } from './failure-mapping.js';
import { allocateGpus } from './gpu-allocation.js';
import type { ModelInstance } from './model-instance.js';
import { MAX_REPLICAS, Replica } from './replica.js';
import type { ReplicaRecovery } from './replica-recovery.js';
import { startReplica } from './replica-start.js';

export interface ReplicaScalingParts {
  launcher: RuntimeLauncher;
  cacheDir: string;
  /** GPUs a replica may ask for now (a cluster's grow as GPU nodes join). */
  gpuCount: () => number;
  recovery: ReplicaRecovery;
  timings: LifecycleTimings;
  logger: Logger;
  /** Saves what runs (its replica counts included) for the next start. */
  persist: () => Promise<void>;
  /**
   * Charges the instance for these replicas (their GPU lists) against the memory
   * budgets, refusing with `insufficient_memory` when more do not fit; fewer always do.
   */
  charge?: (instance: ModelInstance, replicaGpus: number[][]) => Promise<void>;
}

const DRAIN_POLL_MS = 25;

/**
 * Adding and removing replicas of a running model (Xinference 2.12's
 * `POST /v1/models/{uid}/replicas`, `DELETE .../replicas/{id}`; docs/requests.md).
 * A new replica takes calls once READY; a replica being removed takes no new call,
 * finishes those it has (up to the drain timeout), then its runtime is stopped.
 */
export class ReplicaScaling {
  constructor(private readonly parts: ReplicaScalingParts) {}

  async add(instance: ModelInstance): Promise<Replica> {
    requireReady(instance);
    // The launch's own limit: one request must not be able to start runtimes without end.
    if (instance.replicas.length >= MAX_REPLICAS) throw new HangarError('replica_limit', [instance.uid, instance.replicas.length]);
    const index = Math.max(-1, ...instance.replicas.map((r) => r.index)) + 1;
    // The GPUs one more replica of this launch gets, by the launch's own rules.
    const [gpus] = allocateGpus({ ...instance.request, replica: 1, ...(instance.request.gpu_idx ? { gpu_idx: instance.request.gpu_idx.slice(0, instance.request.gpu_idx.length / instance.request.replica) } : {}) }, this.parts.gpuCount());
    // In the list at once (it takes no call until READY), so a concurrent add counts it.
    const replica = new Replica(index, `${instance.uid}-${index}`, gpus ?? []);
    instance.replicas.push(replica);
    const recharge = () => this.parts.charge?.(instance, instance.replicas.map((r) => r.gpuIndexes)).catch(() => {});
    try {
      // One more replica is more memory: refused before it starts if the budget has no room.
      await this.parts.charge?.(instance, instance.replicas.map((r) => r.gpuIndexes));
    } catch (err) {
      remove(instance, replica);
      throw err;
    }
    instance.events.add('INFO', `Adding replica ${replica.uid}`);
    try {
      replica.starting = startReplica(this.parts.launcher, instance, replica, this.parts.cacheDir, instance.lifetime.signal);
      await replica.starting;
    } catch (err) {
      remove(instance, replica);
      await recharge();
      const error = launchFailure(instance, err);
      instance.events.add('ERROR', `Replica ${replica.uid} failed to start: ${error.message}`);
      throw error;
    } finally {
      replica.starting = null;
    }
    if (instance.state !== 'READY') {
      // Terminated while it started: it goes with the rest.
      await replica.runtime?.terminate();
      remove(instance, replica);
      throw new HangarError('runtime_unavailable', [instance.uid, 'the model was terminated while the replica started']);
    }
    this.parts.recovery.watch(instance, replica);
    instance.events.add('INFO', `Replica ${replica.uid} is ready`);
    this.parts.logger.info({ model_uid: instance.uid, replica: replica.uid }, 'replica added');
    await this.parts.persist();
    return replica;
  }

  async remove(instance: ModelInstance, replicaId: number): Promise<void> {
    requireReady(instance);
    const replica = instance.replicas.find((r) => r.index === replicaId);
    // One being removed already (it drains) is gone for a second DELETE: one caller
    // removed it, as one unregister removes a registration.
    if (!replica || replica.status === 'TERMINATING' || replica.status === 'TERMINATED') throw new HangarError('replica_not_found', [replicaId, instance.uid], { param: 'replica_id' });
    const others = instance.replicas.filter((r) => r !== replica && r.status === 'READY');
    if (others.length === 0) throw new HangarError('last_replica', [instance.uid], { param: 'replica_id' });
    instance.events.add('INFO', `Removing replica ${replica.uid}: draining ${replica.inFlight} call(s)`);
    // TERMINATING first: pickReplica skips it, and the recovery watch ignores its exit.
    if (replica.status === 'READY' || replica.status === 'CREATING') replica.transition('TERMINATING');
    // Its start (an add, or a restart after a crash) stops, and a pending restart is
    // dropped: before, a restart still came, and its runtime was left running unlisted.
    replica.removal.abort();
    const deadline = Date.now() + this.parts.timings.drainTimeoutMs;
    while (replica.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
    await replica.starting?.catch(() => {});
    await replica.runtime?.terminate();
    // Read again: the awaits above let the replica's state move (TS keeps the narrowing from before them).
    if ((replica.status as Replica['status']) === 'TERMINATING') replica.transition('TERMINATED');
    remove(instance, replica);
    await this.parts.charge?.(instance, instance.replicas.map((r) => r.gpuIndexes));
    this.parts.logger.info({ model_uid: instance.uid, replica: replica.uid }, 'replica removed');
    await this.parts.persist();
  }
}

function requireReady(instance: ModelInstance): void {
  if (instance.state === 'CREATING') throw new HangarError('model_loading', [instance.uid]);
  if (instance.state !== 'READY') throw new HangarError('runtime_unavailable', [instance.uid, `the model is ${instance.state}`]);
}

function remove(instance: ModelInstance, replica: Replica): void {
  const at = instance.replicas.indexOf(replica);
  if (at >= 0) instance.replicas.splice(at, 1);
}
