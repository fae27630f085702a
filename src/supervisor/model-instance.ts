import { setMaxListeners } from 'node:events';
import type { ResolvedModel } from '../registry/index.js';
import { EventLog } from './event-log.js';
import { assertTransition, type InstanceState } from './instance-state.js';
import type { LaunchRequest } from './launch-request.js';
import { MAX_REPLICAS, type Replica } from './replica.js';

/**
 * One record per model instance (not ten maps keyed by uid): what was asked, what
 * it resolved to, its replicas, its state and its events. State changes go through
 * `transition`, which checks them and records an event.
 */
export class ModelInstance {
  state: InstanceState = 'CREATING';
  errorMessage: string | null = null;
  readonly events = new EventLog();
  readonly createdTs = Math.floor(Date.now() / 1000);
  /** Aborting it cancels a launch in progress. */
  readonly launchAbort = new AbortController();
  /** Aborted when the instance is terminated: cancels pending and running restarts. */
  readonly lifetime = new AbortController();
  /** Settles when the launch has ended, either way. Rejects with the launch's error. */
  launched: Promise<void> = Promise.resolve();
  /** Set by the first terminate; later ones wait for it. */
  stopping: Promise<void> | null = null;
  private nextReplica = 0;

  constructor(
    readonly uid: string,
    readonly request: LaunchRequest,
    readonly key: string,
    readonly resolved: ResolvedModel,
    readonly replicas: Replica[],
  ) {
    // Each replica that is starting listens on one of these signals, and each pending
    // restart on `lifetime`: eleven replicas starting at once pass Node's threshold of 10,
    // which it reports on stderr as a likely leak.
    setMaxListeners(2 * MAX_REPLICAS + 4, this.launchAbort.signal, this.lifetime.signal);
  }

  transition(to: InstanceState, message?: string): void {
    assertTransition(`model ${this.uid}`, this.state, to);
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
