import type { Logger } from '../logging/logger.js';
import type { RuntimeLauncher } from '../runtime/runtime.js';
import { RuntimeFailure } from '../runtime/runtime-failure.js';
import { HangarError } from '../errors/hangar-error.js';
import { launchFailure } from './failure-mapping.js';
import type { LifecycleEvents } from './lifecycle-events.js';
import type { MemoryAccounting } from './memory-accounting.js';
import type { ModelInstance } from './model-instance.js';
import type { ReplicaRecovery } from './replica-recovery.js';
import { startReplica } from './replica-start.js';

export interface InstanceStartupParts {
  launcher: RuntimeLauncher;
  cacheDir: string;
  logger: Logger;
  memory: MemoryAccounting;
  recovery: ReplicaRecovery;
  lifecycle: LifecycleEvents;
  /** Frees the uid of an instance the budgets refused (nothing of it started). */
  release: (instance: ModelInstance) => void;
  /** The instance is READY: no longer a saved model waiting to come back. */
  restored: (instance: ModelInstance) => void;
  /** Saves what runs now. */
  persist: () => Promise<void>;
}

/**
 * A new instance from CREATING to READY, or back to nothing: the memory budgets admit it
 * first (a refusal frees the uid and starts nothing), then every replica starts at
 * once; one that fails, or a cancel, stops all that did start and ends the instance
 * in ERROR with the contract's answer for the cause (failure-mapping.ts).
 */
export async function startInstance(instance: ModelInstance, parts: InstanceStartupParts): Promise<void> {
  const { launcher, cacheDir, logger } = parts;
  const signal = instance.launchAbort.signal;
  const startedAt = performance.now();
  const report = (outcome: 'ready' | 'failed'): void =>
    parts.lifecycle.launched({
      modelUid: instance.uid,
      modelName: instance.resolved.modelName,
      modelType: instance.resolved.modelType,
      outcome,
      onDemand: instance.onDemand,
      seconds: (performance.now() - startedAt) / 1000,
    });
  // The estimate and the budgets' verdict: a refusal leaves no record and starts nothing.
  instance.admitted = parts.memory.admitLaunch(instance).catch((err: unknown) => {
    throw signal.aborted && !(err instanceof HangarError) ? new HangarError('launch_cancelled', [instance.uid]) : err;
  });
  try {
    await instance.admitted;
  } catch (err) {
    if (instance.state === 'CREATING') instance.transition('ERROR', err instanceof Error ? err.message : String(err));
    // Refused (or cancelled) before anything started: the uid is free again.
    parts.release(instance);
    if (err instanceof HangarError && err.code === 'insufficient_memory') logger.warn({ model_uid: instance.uid }, err.message);
    throw err;
  }
  const results = await Promise.allSettled(instance.replicas.map((replica) => startReplica(launcher, instance, replica, cacheDir, signal)));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed && instance.state === 'CREATING') {
    for (const replica of instance.replicas) parts.recovery.watch(instance, replica);
    instance.transition('READY', 'Model is ready');
    instance.lastUsedAt = Date.now();
    parts.restored(instance);
    report('ready');
    logger.info({ model_uid: instance.uid, replicas: instance.replicas.length }, 'model ready');
    await parts.persist();
    return;
  }
  // Roll back completely: every replica that did start is stopped, the uid is free.
  instance.launchAbort.abort();
  await Promise.all(results.map((r) => (r.status === 'fulfilled' ? r.value.terminate() : undefined)));
  const cause = failed?.reason ?? new RuntimeFailure('cancelled', 'The launch was cancelled');
  const error = launchFailure(instance, cause);
  for (const replica of instance.replicas) {
    if (replica.status === 'CREATING' || replica.status === 'READY') replica.transition('ERROR', error.message);
  }
  if (instance.state === 'CREATING') instance.transition('ERROR', error.message);
  report('failed');
  logger.warn({ model_uid: instance.uid, code: error.code }, `launch failed: ${error.message}`);
  throw error;
}
