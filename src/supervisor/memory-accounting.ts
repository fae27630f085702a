import type { Logger } from '../logging/logger.js';
import { estimateMemory, type ResolvedModel } from '../registry/index.js';
import { hubTokenOverrides } from '../runtime/hub-credentials.js';
import { MemoryAdmission, type Sleeper } from './memory-admission.js';
import { chargeOf, deviceUse, heldBy, type DeviceUse, type MemoryBudgets, type MemoryCharge } from './memory-budget.js';
import type { ModelInstance } from './model-instance.js';
import type { ModelQuery } from './model-query.js';

export interface MemoryAccountingParts {
  /** The budgets launches must fit in; null: none is checked (cluster mode). */
  budgets: (() => MemoryBudgets) | null;
  cacheDir: string;
  resolve: (query: ModelQuery) => ResolvedModel;
  /** Every instance in the table. */
  instances: () => Iterable<ModelInstance>;
  /** Unloads an idle on-demand model to make room for `forUid`. */
  evict: (victim: ModelInstance, forUid: string) => Promise<void>;
  /** vLLM sleep mode, a lighter eviction where a GPU is short. */
  sleeper: Sleeper;
  /** How long a load on demand may wait for busy models to make room. */
  onDemandWaitMs: () => number;
  logger: Logger;
}

/** How long a launch waits for the hub's file listing before it estimates from the catalog (Xinference's hub probe waits 3 s). */
const HUB_LOOKUP_MS = 3000;

/**
 * The supervisor's memory side (docs/on-demand.md): each launch's estimate and its
 * admission into the budgets, replicas added and removed, and what each device holds.
 */
export class MemoryAccounting {
  private readonly admission: MemoryAdmission;

  constructor(private readonly parts: MemoryAccountingParts) {
    this.admission = new MemoryAdmission({
      budgets: () => this.budgets(),
      holders: () => [...parts.instances()].filter((i) => i.isActive),
      evict: parts.evict,
      sleeper: parts.sleeper,
      logger: parts.logger,
    });
  }

  private budgets(): MemoryBudgets {
    return this.parts.budgets?.() ?? { hostBytes: Number.POSITIVE_INFINITY, gpuBytes: {} };
  }

  /**
   * The memory estimate, and admission into the budgets (evicting idle on-demand models
   * if need be); rejects with `insufficient_memory` when it cannot fit.
   */
  async admitLaunch(instance: ModelInstance): Promise<void> {
    const { resolved, request } = instance;
    const onGpu = instance.replicas.some((r) => r.gpuIndexes.length > 0);
    // A model not downloaded yet is sized from the hub's file listing (the launch's envs name the hub, as the runtime's).
    const hub = { env: hubEnvironment(request.envs), timeoutMs: HUB_LOOKUP_MS };
    const estimate = await estimateMemory({ resolved, modelPath: request.model_path, engineKwargs: request.engine_kwargs, onGpu, cacheDir: this.parts.cacheDir, hub });
    instance.memoryEstimate = estimate;
    const charge = chargeOf(estimate, instance.replicas.map((r) => r.gpuIndexes), resolved.runtimeEngine, request.engine_kwargs, this.budgets());
    const waitUntil = instance.onDemand ? Date.now() + this.parts.onDemandWaitMs() : null;
    await this.admission.admit(instance, estimate, charge, { force: request.force === true, waitUntil, signal: instance.launchAbort.signal });
  }

  /** A sleeping model about to wake: its full charge, admitted as a load on demand would be. */
  async admitWake(instance: ModelInstance, charge: MemoryCharge): Promise<void> {
    const estimate = instance.memoryEstimate;
    if (!estimate) return;
    await this.admission.admit(instance, estimate, charge, { force: false, waitUntil: Date.now() + this.parts.onDemandWaitMs(), signal: instance.lifetime.signal });
  }

  /** A replica more or fewer: the instance's charge for these replicas, admitted into the budgets. */
  async chargeReplicas(instance: ModelInstance, replicaGpus: number[][]): Promise<void> {
    const estimate = instance.memoryEstimate;
    if (!estimate) return;
    const charge = chargeOf(estimate, replicaGpus, instance.resolved.runtimeEngine, instance.request.engine_kwargs, this.budgets());
    const fewer = replicaGpus.length < instance.replicas.length || (instance.charge !== null && charge.host <= instance.charge.host);
    await this.admission.admit(instance, estimate, charge, { force: fewer || instance.request.force === true, waitUntil: null, signal: instance.lifetime.signal });
  }

  /**
   * The memory estimate of one replica of a launch on CPU, before anything is
   * downloaded (`GET /v1/engines` entries, the web UI's launch drawer); null where the
   * launch does not resolve or nothing says the model's size.
   */
  async estimate(query: ModelQuery): Promise<number | null> {
    let resolved: ResolvedModel;
    try {
      resolved = this.parts.resolve(query);
    } catch {
      return null;
    }
    const estimate = await estimateMemory({ resolved, engineKwargs: query.engine_kwargs ?? {}, onGpu: false, cacheDir: this.parts.cacheDir });
    return estimate.basis === 'none' ? null : estimate.bytes;
  }

  /** Each device's budget, what is held and by whom (`GET /v1/memory`). */
  use(): DeviceUse[] {
    const holders = [...this.parts.instances()].filter((i) => i.isActive && i.charge !== null).map((i) => ({ uid: i.uid, held: heldBy(i) }));
    return deviceUse(this.budgets(), holders);
  }
}

/** The service's environment with the launch's `envs` over it, as its runtime gets it (runtime/hub-credentials.ts). */
export function hubEnvironment(envs: Record<string, string>): Record<string, string | undefined> {
  return { ...process.env, ...envs, ...hubTokenOverrides(envs) };
}
