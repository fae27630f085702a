import type { LifecycleTimings } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { RuntimeLauncher } from '../runtime/runtime.js';
import type { LifecycleEvents } from './lifecycle-events.js';
import type { ModelInstance } from './model-instance.js';
import type { Replica } from './replica.js';
import { startReplica } from './replica-start.js';

/**
 * What happens when a READY replica's runtime dies: the death is recorded (event,
 * log, replica ERROR with the cause), then the replica is restarted after the
 * policy's backoff. A restart that fails counts as another death. When the policy
 * gives up, the replica stays in ERROR; when no replica is left serving or coming
 * back, the instance goes to ERROR with the reason.
 */
export class ReplicaRecovery {
  constructor(
    private readonly launcher: RuntimeLauncher,
    private readonly cacheDir: string,
    private readonly timings: LifecycleTimings,
    private readonly logger: Logger,
    private readonly events: LifecycleEvents,
  ) {}

  watch(instance: ModelInstance, replica: Replica): void {
    // Its last lines too: this is the operator's record (events, log, the listing's error);
    // a caller of the model reads only how it died (replica-calls.ts).
    replica.runtime?.onDeath((how, output) => {
      const reason = how + (output ?? '');
      if (replica.status !== 'READY' || instance.state !== 'READY') return; // stopped on purpose
      replica.transition('ERROR', reason);
      instance.events.add('ERROR', `Replica ${replica.uid} died: ${reason}`);
      this.logger.error({ model_uid: instance.uid, replica: replica.uid }, `runtime died: ${reason}`);
      this.scheduleRestart(instance, replica, reason);
    });
  }

  private scheduleRestart(instance: ModelInstance, replica: Replica, reason: string): void {
    const delay = replica.restarts(this.timings).next();
    if (delay === null) {
      const message = `Replica ${replica.uid} was restarted ${this.timings.restartLimit} times within ${Math.round(this.timings.restartWindowMs / 1000)} s and is left down; last failure: ${reason}`;
      replica.restartAt = null;
      instance.events.add('ERROR', message);
      this.logger.error({ model_uid: instance.uid, replica: replica.uid }, message);
      const anyLeft = instance.replicas.some((r) => r.status === 'READY' || r.restartAt !== null || r.status === 'CREATING');
      if (instance.state === 'READY' && !anyLeft) instance.transition('ERROR', message);
      return;
    }
    replica.restartAt = Date.now() + delay;
    instance.events.add('WARNING', `Restarting replica ${replica.uid} in ${delay} ms`);
    // Dropped when the instance ends or the replica is removed. The listeners go when
    // the timer fires: a replica restarted over a long life must not pile them up.
    const signals = [instance.lifetime.signal, replica.removal.signal];
    const cancel = (): void => clearTimeout(timer);
    const timer = setTimeout(() => {
      for (const s of signals) s.removeEventListener('abort', cancel);
      // A failure here must not end the process (an unhandled rejection would).
      this.restart(instance, replica).catch((err: unknown) => this.logger.error({ err, model_uid: instance.uid, replica: replica.uid }, 'replica restart failed'));
    }, delay);
    timer.unref();
    for (const s of signals) s.addEventListener('abort', cancel, { once: true });
  }

  private async restart(instance: ModelInstance, replica: Replica): Promise<void> {
    if (instance.lifetime.signal.aborted || instance.state !== 'READY' || replica.removal.signal.aborted) return;
    replica.restartAt = null;
    replica.transition('CREATING');
    this.events.restarted({ modelUid: instance.uid, modelName: instance.resolved.modelName, modelType: instance.resolved.modelType, replica: replica.uid });
    replica.starting = startReplica(this.launcher, instance, replica, this.cacheDir, instance.lifetime.signal);
    try {
      await replica.starting;
    } catch (err) {
      // Terminated, or the replica removed (it is TERMINATING: no move to ERROR, which
      // threw here, unhandled, and ended the process).
      if (instance.lifetime.signal.aborted || replica.removal.signal.aborted) return;
      const reason = err instanceof Error ? err.message : String(err);
      replica.transition('ERROR', reason);
      instance.events.add('ERROR', `Restart of replica ${replica.uid} failed: ${reason}`);
      this.scheduleRestart(instance, replica, reason);
      return;
    } finally {
      replica.starting = null;
    }
    // Terminated while the restart was loading: stop what just started.
    if (instance.state !== 'READY') {
      await replica.runtime?.terminate();
      return;
    }
    instance.events.add('INFO', `Replica ${replica.uid} restarted`);
    this.logger.info({ model_uid: instance.uid, replica: replica.uid }, 'replica restarted');
    this.watch(instance, replica);
  }
}
