import { HangarError } from '../errors/hangar-error.js';
import type { Logger } from '../logging/logger.js';
import type { LifecycleEvents } from './lifecycle-events.js';
import { CUDA_CONTEXT_BYTES, sizeText, type MemoryCharge } from './memory-budget.js';
import type { ModelInstance } from './model-instance.js';

export interface SleepModeParts {
  /** Admits a waking model's full charge into the budgets (evicting idle ones if need be); rejects as a launch would. */
  admit: (instance: ModelInstance, charge: MemoryCharge) => Promise<void>;
  /** Unloads a model whose wake failed: its runtimes' state is unknown. */
  unload: (instance: ModelInstance, why: string) => Promise<void>;
  lifecycle: LifecycleEvents;
  logger: Logger;
}

/**
 * vLLM sleep mode level 1 as a lighter eviction (docs/on-demand.md, "vLLM sleep mode"):
 * an idle on-demand vLLM model whose GPU is wanted keeps its process, CUDA context and
 * compiled graphs, moves its weights to host memory and drops its KV cache. Woken, it
 * serves again in about a second where a reload takes tens of seconds or minutes.
 * Only where host memory has room for the weights (the admission checks that), and
 * only for models started with sleep mode (the runtime says `sleep_mode` in READY).
 */
export class SleepMode {
  constructor(private readonly parts: SleepModeParts) {}

  /** An awake, idle-able vLLM model started with sleep mode, on GPUs, every replica serving. */
  canSleep(instance: ModelInstance): boolean {
    return (
      instance.state === 'READY' &&
      instance.onDemand &&
      instance.charge !== null &&
      instance.memoryEstimate !== null &&
      instance.sleepChange === null &&
      !instance.asleep &&
      instance.replicas.length > 0 &&
      instance.replicas.every((r) => r.status === 'READY' && r.gpuIndexes.length > 0 && r.runtime?.ready.description.sleep_mode === true)
    );
  }

  /**
   * What a sleeping model holds: its host share plus each replica's weights in host
   * memory, and on each GPU only the CUDA context that the process keeps.
   */
  asleepCharge(instance: ModelInstance): MemoryCharge {
    const awake = instance.charge ?? { host: 0, gpus: {} };
    const weights = instance.memoryEstimate?.weights ?? 0;
    const gpus: Record<number, number> = {};
    for (const replica of instance.replicas) for (const gpu of replica.gpuIndexes) gpus[gpu] = (gpus[gpu] ?? 0) + CUDA_CONTEXT_BYTES;
    return { host: awake.host + weights * instance.replicas.length, gpus };
  }

  /**
   * Puts an idle model to sleep to make room for `forUid`; false when a runtime refused
   * or failed (the caller unloads it instead). Requests that name it from now on wait
   * for it to wake.
   */
  async sleep(instance: ModelInstance, forUid: string): Promise<boolean> {
    const awake = instance.charge!;
    const asleep = this.asleepCharge(instance);
    for (const replica of instance.replicas) replica.asleep = true;
    const started = performance.now();
    const change = Promise.all(instance.replicas.map((r) => r.runtime!.call('sleep', [], { level: 1 }, { signal: callSignal(instance) })));
    instance.sleepChange = change;
    try {
      await change;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      instance.events.add('WARNING', `Could not be put to sleep (${why}); unloaded instead`);
      this.parts.logger.warn({ model_uid: instance.uid, err }, `could not put ${instance.uid} to sleep: ${why}`);
      return false;
    } finally {
      instance.sleepChange = null;
    }
    instance.awakeCharge = awake;
    instance.charge = asleep;
    const seconds = (performance.now() - started) / 1000;
    instance.events.add('INFO', `Put to sleep to make room for ${forUid} (vLLM sleep mode level 1: ${sizeText(asleep.host - awake.host)} of weights moved to host memory in ${seconds.toFixed(2)} s)`);
    this.parts.logger.info({ model_uid: instance.uid, for: forUid, seconds }, `model ${instance.uid} put to sleep to make room for ${forUid}`);
    this.parts.lifecycle.unloaded({ modelUid: instance.uid, modelName: instance.resolved.modelName, modelType: instance.resolved.modelType, reason: 'sleep' });
    return true;
  }

  /**
   * Wakes a sleeping model (after a sleep still in progress): its full charge is
   * admitted again first, which may put others to sleep or unload them, or refuse
   * (`insufficient_memory`, and it stays asleep). Concurrent callers share one wake.
   */
  wake(instance: ModelInstance): Promise<void> {
    const change = instance.sleepChange;
    if (change) return change.then(() => this.wake(instance), () => this.wake(instance));
    if (!instance.asleep || instance.state !== 'READY') return Promise.resolve();
    const waking = this.wakeNow(instance);
    instance.sleepChange = waking;
    const clear = (): void => {
      if (instance.sleepChange === waking) instance.sleepChange = null;
    };
    waking.then(clear, clear);
    return waking;
  }

  private async wakeNow(instance: ModelInstance): Promise<void> {
    const started = performance.now();
    const awake = instance.awakeCharge ?? instance.charge ?? { host: 0, gpus: {} };
    await this.parts.admit(instance, awake);
    try {
      await Promise.all(instance.replicas.filter((r) => r.asleep).map((r) => r.runtime!.call('wake_up', [], {}, { signal: callSignal(instance) })));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.report(instance, 'failed', started);
      // Half awake is no state to serve from: the next request loads it afresh.
      await this.parts.unload(instance, `unloaded: it could not be woken (${why})`);
      throw new HangarError('runtime_unavailable', [instance.uid, `it could not be woken from sleep: ${why}`], { cause: err });
    }
    for (const replica of instance.replicas) replica.asleep = false;
    instance.awakeCharge = null;
    const seconds = this.report(instance, 'ready', started);
    instance.events.add('INFO', `Woken from sleep in ${seconds.toFixed(2)} s`);
    this.parts.logger.info({ model_uid: instance.uid, seconds }, `model ${instance.uid} woken from sleep`);
  }

  private report(instance: ModelInstance, outcome: 'ready' | 'failed', started: number): number {
    const seconds = (performance.now() - started) / 1000;
    this.parts.lifecycle.woken({ modelUid: instance.uid, modelName: instance.resolved.modelName, modelType: instance.resolved.modelType, outcome, seconds });
    return seconds;
  }
}

/**
 * A sleep or wake ends with the model, or after a while: the admission that asked for a
 * sleep waits for it, and must not wait forever on a runtime that hangs (the runtime
 * gives vLLM 300 s).
 */
function callSignal(instance: ModelInstance): AbortSignal {
  return AbortSignal.any([instance.lifetime.signal, AbortSignal.timeout(SLEEP_CALL_MS)]);
}

const SLEEP_CALL_MS = 310_000;
