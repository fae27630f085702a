import { setMaxListeners } from 'node:events';
import type { MemoryEstimate, ResolvedModel } from '../registry/index.js';
import { EventLog } from './event-log.js';
import { assertTransition, type InstanceState } from './instance-state.js';
import type { LaunchRequest } from './launch-request.js';
import { MAX_REPLICAS, type Replica } from './replica.js';
import type { MemoryCharge } from './memory-charge.js';

/**
 * One record per model instance (not ten maps keyed by uid): what was asked, what
 * it resolved to, its replicas, its state and its events. State changes go through
 * `transition`, which checks them and records an event.
 */
export class ModelInstance {
  state: InstanceState = 'CREATING';
  errorMessage: string | null = null;
  readonly events: EventLog;
  /** What one replica is expected to hold (registry/memory-estimate.ts); null until worked out at launch. */
  memoryEstimate: MemoryEstimate | null = null;
  /** What the whole instance is charged against the memory budgets once admitted (memory-budget.ts). */
  charge: MemoryCharge | null = null;
  /** Loaded by a request naming an on-demand entry: such a model may be evicted for another. */
  onDemand = false;
  /** Unload after this long idle; null: never (docs/on-demand.md, "Idle unload"). */
  keepAliveMs: number | null = null;
  /** The keep_alive a launch by hand asked for, saved for a restart; undefined: none (the default then). */
  keepAliveAsked: number | null | undefined;
  /** Requests holding the model: from when one names it until its answer is done (api/model-lease.ts). */
  leases = 0;
  /** When the last request let go of it (or it became READY): idle time counts from here. */
  lastUsedAt = Date.now();
  readonly createdTs = Math.floor(Date.now() / 1000);
  /** Aborting it cancels a launch in progress. */
  readonly launchAbort = new AbortController();
  /** Aborted when the instance is terminated: cancels pending and running restarts. */
  readonly lifetime = new AbortController();
  /** Settles when the launch has ended, either way. Rejects with the launch's error. */
  launched: Promise<void> = Promise.resolve();
  /** Settles when the memory budgets have admitted the launch; rejects with its refusal. */
  admitted: Promise<void> = Promise.resolve();
  /** While asleep: its charge when awake, admitted again when it wakes (sleep-mode.ts). */
  awakeCharge: MemoryCharge | null = null;
  /** A sleep or a wake in progress (sleep-mode.ts); requests wait for it. */
  sleepChange: Promise<unknown> | null = null;
  /** Set by the first terminate; later ones wait for it. */
  stopping: Promise<void> | null = null;
  /** When its launch failed (CREATING to ERROR); null otherwise (failed-launches.ts). */
  launchFailedAt: number | null = null;
  private nextReplica = 0;

  constructor(
    readonly uid: string,
    readonly request: LaunchRequest,
    readonly key: string,
    readonly resolved: ResolvedModel,
    readonly replicas: Replica[],
    /** An on-demand entry's log, kept across its loads and unloads; a new one otherwise. */
    events?: EventLog,
  ) {
    this.events = events ?? new EventLog();
    // Each replica that is starting listens on one of these signals, and each pending
    // restart on `lifetime`: eleven replicas starting at once pass Node's threshold of 10,
    // which it reports on stderr as a likely leak.
    setMaxListeners(2 * MAX_REPLICAS + 4, this.launchAbort.signal, this.lifetime.signal);
  }

  transition(to: InstanceState, message?: string): void {
    assertTransition(`model ${this.uid}`, this.state, to);
    if (this.state === 'CREATING' && to === 'ERROR') this.launchFailedAt = Date.now();
    this.state = to;
    if (to === 'ERROR') {
      this.errorMessage = message ?? 'unknown error';
      this.events.add('ERROR', message ?? 'Model failed');
    } else if (message) {
      this.events.add('INFO', message);
    }
  }

  /** Still holds its uid: a new launch of the same uid must wait, match, or be refused. */
  get isActive(): boolean {
    return this.state === 'CREATING' || this.state === 'READY' || this.state === 'TERMINATING';
  }

  get progress(): number {
    if (this.state === 'READY') return 1;
    if (this.replicas.length === 0) return 0;
    return this.replicas.reduce((sum, r) => sum + r.progress, 0) / this.replicas.length;
  }

  /** Round robin over the replicas that can take a call now; null when none can. */
  pickReplica(limit: number | null): Replica | null {
    const n = this.replicas.length;
    for (let i = 0; i < n; i++) {
      const replica = this.replicas[(this.nextReplica + i) % n]!;
      if (replica.status !== 'READY' || !replica.runtime) continue;
      if (limit !== null && replica.inFlight >= limit) continue;
      this.nextReplica = (this.nextReplica + i + 1) % n;
      return replica;
    }
    return null;
  }

  /** Put to sleep to make room (vLLM sleep mode): READY, but woken before it serves again. */
  get asleep(): boolean {
    return this.replicas.some((r) => r.asleep);
  }

  /** No request holds it and no call is in flight on any replica. */
  get idle(): boolean {
    return this.leases === 0 && this.replicas.every((r) => r.inFlight === 0);
  }

  get abilities(): string[] {
    const fromRuntime = this.replicas.find((r) => r.runtime)?.runtime?.ready.abilities ?? [];
    return fromRuntime.length > 0 ? fromRuntime : this.resolved.abilities;
  }

  /** GET /v1/models item and GET /v1/models/{uid} (contract §3.2). */
  describe(): Record<string, unknown> {
    const first = this.replicas.find((r) => r.runtime)?.runtime;
    return {
      id: this.uid,
      object: 'model',
      created: this.createdTs,
      owned_by: 'hangar',
      model_type: this.resolved.modelType,
      model_name: this.resolved.modelName,
      model_engine: this.resolved.engine,
      replica: this.replicas.length,
      address: first?.address ?? null,
      accelerators: [...new Set(this.replicas.flatMap((r) => r.gpuIndexes.map(String)))],
      ...this.resolved.description,
      ...(first?.ready.description ?? {}),
      model_ability: this.abilities,
      ...this.memoryRecord(),
      // A failed launch's record says so here too (docs/requests.md, "Failed launches"); it looked like a model.
      ...(this.state === 'ERROR' ? { status: 'ERROR', error_message: this.errorMessage } : {}),
    };
  }

  /**
   * What the model holds and may hold (docs/on-demand.md): the estimate per replica,
   * each replica's measured resident memory (and GPU memory where nvidia-smi reports
   * it), whether it was loaded on demand, its keep_alive and how long it has been idle.
   */
  memoryRecord(): Record<string, unknown> {
    const idleSeconds = this.state === 'READY' && this.idle ? Math.max(0, Math.floor((Date.now() - this.lastUsedAt) / 1000)) : 0;
    return {
      memory_estimate: this.memoryEstimate?.bytes ?? null,
      memory_estimate_detail: this.memoryEstimate,
      replica_memory: this.replicas.map((r) => ({
        replica: r.uid,
        rss_bytes: r.runtime?.stats?.rssBytes ?? null,
        gpu_memory_bytes: r.runtime ? (r.gpuMemoryBytes ?? null) : null,
      })),
      on_demand: this.onDemand,
      sleeping: this.asleep,
      keep_alive: this.keepAliveMs === null ? -1 : this.keepAliveMs / 1000,
      idle_seconds: idleSeconds,
    };
  }

  /** GET /v1/models/instances item (Xinference's shape, notes §3.5). */
  toInstanceRecord(): Record<string, unknown> {
    return {
      model_name: this.resolved.modelName,
      model_uid: this.uid,
      model_type: this.resolved.modelType,
      model_engine: this.resolved.engine,
      model_version: null,
      model_ability: this.state === 'READY' ? this.abilities : [],
      replica: this.replicas.length,
      status: this.state,
      instance_created_ts: this.createdTs,
      n_worker: 1,
      error_message: this.errorMessage,
      replica_statuses: this.replicas.map((r) => r.toRecord()),
    };
  }
}
