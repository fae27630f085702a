import { setTimeout as sleep } from 'node:timers/promises';
import { HangarError } from '../errors/hangar-error.js';
import type { Logger } from '../logging/logger.js';
import type { MemoryEstimate } from '../registry/index.js';
import { heldBy, overBudget, sizeText, type MemoryBudgets, type MemoryCharge } from './memory-budget.js';
import type { ModelInstance } from './model-instance.js';

export interface AdmissionOptions {
  /** `force: true`: the operator knows better; charged, never refused. */
  force: boolean;
  /**
   * A load on demand may wait, until then (ms since the epoch), for busy on-demand
   * models to finish so they can be evicted; null: refuse at once (a launch by hand).
   */
  waitUntil: number | null;
  signal: AbortSignal;
}

export interface AdmissionParts {
  budgets: () => MemoryBudgets;
  /** Every instance that holds (or is about to hold) memory: in the table and active. */
  holders: () => ModelInstance[];
  /** Unloads an idle on-demand model to make room; resolves when its processes are gone. */
  evict: (victim: ModelInstance, forUid: string) => Promise<void>;
  /** vLLM sleep mode (sleep-mode.ts): a lighter eviction where only a GPU is short; absent: never. */
  sleeper?: Sleeper | null;
  logger: Logger;
}

/** What the admission needs of sleep mode. */
export interface Sleeper {
  canSleep(instance: ModelInstance): boolean;
  /** What the model holds once asleep: its weights in host memory, little on its GPUs. */
  asleepCharge(instance: ModelInstance): MemoryCharge;
  /** False when it could not be put to sleep (then it is unloaded). */
  sleep(instance: ModelInstance, forUid: string): Promise<boolean>;
}

const BUSY_POLL_MS = 250;

/**
 * Admits launches into the memory budgets one at a time (docs/on-demand.md, "Memory
 * budget" and "Eviction"): a launch that does not fit unloads idle models that were
 * loaded on demand, least recently used first, until it fits; models launched by hand
 * are never evicted. If even evicting every idle one would not make room, nothing is
 * evicted and the launch is refused (400 `insufficient_memory`), before any process
 * starts. One at a time, so two launches never count the same free bytes.
 */
export class MemoryAdmission {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly parts: AdmissionParts) {}

  async admit(instance: ModelInstance, estimate: MemoryEstimate, charge: MemoryCharge, options: AdmissionOptions): Promise<void> {
    // A load that waits for busy models waits between turns, not in one: launches by
    // hand and forced ones behind it are decided at once (they waited up to
    // HANGAR_ON_DEMAND_WAIT_MS in line before).
    while ((await this.turn(() => this.admitNow(instance, estimate, charge, options), options.signal)) === 'wait') {
      await sleep(BUSY_POLL_MS, undefined, { signal: options.signal });
    }
  }

  /** `work` alone in the queue; a launch cancelled while it waits for its turn ends now, not when the turn comes. */
  private turn<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const turn = this.tail.then(work);
    this.tail = turn.then(() => {}, () => {});
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason ?? new Error('aborted'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      turn.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** One turn: admitted, or 'wait' (busy on-demand models will be idle soon), or a refusal. */
  private async admitNow(instance: ModelInstance, estimate: MemoryEstimate, charge: MemoryCharge, options: AdmissionOptions): Promise<'admitted' | 'wait'> {
    for (;;) {
      options.signal.throwIfAborted();
      const others = this.parts.holders().filter((i) => i !== instance && i.charge !== null);
      const held = others.map((i) => ({ uid: i.uid, held: heldBy(i), instance: i }));
      const budgets = this.parts.budgets();
      const over = overBudget(budgets, charge, held);
      if (!over) {
        instance.charge = charge;
        return 'admitted';
      }
      const onDemand = held.filter((h) => h.instance.onDemand);
      const idle = onDemand.filter((h) => h.instance.state === 'READY' && h.instance.idle).sort((a, b) => a.instance.lastUsedAt - b.instance.lastUsedAt);
      // `force` means "do not refuse", not "keep the idle models I said may go": they are
      // unloaded first, as far as they help, and only then is the budget passed.
      if (options.force && idle.length === 0) {
        this.parts.logger.warn({ model_uid: instance.uid, device: over.device }, `launching ${instance.uid} past the ${over.device} memory budget (force)`);
        instance.charge = charge;
        return 'admitted';
      }
      // Would unloading every idle on-demand model be enough? If not, unload none (with force: all, one by one).
      const rest = held.filter((h) => !idle.includes(h));
      if (idle.length > 0 && (options.force || !overBudget(budgets, charge, rest))) {
        const victim = idle[0]!;
        if (over.device !== 'cpu' && (await this.putToSleep(victim, held, budgets, charge, instance.uid))) continue;
        await this.parts.evict(victim.instance, instance.uid);
        continue;
      }
      // Loading, or serving a request: each can be evicted once its requests are done.
      // Worth waiting for only if unloading every on-demand model would make room.
      const busy = onDemand.length > idle.length && !overBudget(budgets, charge, held.filter((h) => !h.instance.onDemand));
      // LocalAI's way: busy models finish their requests, then one can go.
      if (busy && options.waitUntil !== null && Date.now() < options.waitUntil) return 'wait';
      // The wait ran out while the models in the way still serve: they will be idle
      // soon, so this is a state to retry, not a request that can never fit.
      if (busy && options.waitUntil !== null) {
        const names = onDemand.filter((h) => !idle.includes(h)).map((h) => h.uid).join(', ');
        throw new HangarError('model_loading', [`${instance.uid} (waiting for memory: ${names} still serving requests)`], { headers: { 'retry-after': '5' } });
      }
      throw refusal(instance.uid, estimate, over, held.length > 0, instance.replicas.length);
    }
  }

  /**
   * Where a GPU is short, an idle vLLM model started with sleep mode is put to sleep
   * rather than unloaded, if host memory can hold its weights besides this launch's
   * share (vLLM's level 1 keeps them there). A sleeping model that is still in the
   * way is unloaded at the next turn of the loop, as any idle one.
   */
  private async putToSleep(victim: Held, held: Held[], budgets: MemoryBudgets, charge: MemoryCharge, forUid: string): Promise<boolean> {
    const sleeper = this.parts.sleeper;
    if (!sleeper?.canSleep(victim.instance)) return false;
    const asleep = sleeper.asleepCharge(victim.instance);
    const after = held.map((h) => (h === victim ? { ...h, held: { host: Math.max(h.held.host, asleep.host), gpus: asleep.gpus } } : h));
    if (overBudget({ hostBytes: budgets.hostBytes, gpuBytes: {} }, { host: charge.host, gpus: {} }, after)) return false;
    return sleeper.sleep(victim.instance, forUid);
  }
}

interface Held {
  uid: string;
  held: MemoryCharge;
  instance: ModelInstance;
}

function refusal(uid: string, estimate: MemoryEstimate, over: NonNullable<ReturnType<typeof overBudget>>, anyHolder: boolean, replicas: number): HangarError {
  // The parts are one replica's; the need is all of them (it said 921 MiB of parts summing to 460).
  const parts = `${replicas > 1 ? `${replicas} replicas, each ` : ''}weights ${sizeText(estimate.weights)}, KV cache ${sizeText(estimate.kv_cache)}, runtime ${sizeText(estimate.overhead)}`;
  const holders = over.models.length > 0 ? `; held by ${over.models.map((m) => `${m.model_uid} (${sizeText(m.bytes)})`).join(', ')}` : '';
  const device = over.device === 'cpu' ? 'host memory' : `memory of ${over.device.replace(':', ' ')}`;
  // Larger than the whole budget: no other model's going makes room.
  const hint = over.need > over.budget_bytes
    ? `It is larger than the whole budget: raise --memory-budget (HANGAR_MEMORY_BUDGET)${replicas > 1 ? ', launch fewer replicas' : ''} or launch with force: true (CLI: --force).`
    : anyHolder
      ? 'Terminate a model, launch the others on demand so they can be unloaded, raise --memory-budget, or launch with force: true (CLI: --force).'
      : 'Raise --memory-budget (HANGAR_MEMORY_BUDGET) or launch with force: true (CLI: --force).';
  return new HangarError('insufficient_memory', [
    uid,
    `it needs about ${sizeText(over.need)} of ${device} (${parts}) and ${sizeText(over.free_bytes)} of the ${sizeText(over.budget_bytes)} budget is free${holders}. ${hint}`,
  ], { param: null });
}
