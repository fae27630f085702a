import type { Runtime } from '../runtime/runtime.js';
import { RestartPolicy, type RestartSettings } from './restart-policy.js';
import { assertTransition, type InstanceState } from './instance-state.js';

/** The most replicas one model instance has, at launch or by adding replicas later. */
export const MAX_REPLICAS = 64;

/** One replica of a model instance: `<uid>-<n>`, one runtime process. */
export class Replica {
  status: InstanceState = 'CREATING';
  progress = 0;
  errorMessage: string | null = null;
  runtime: Runtime | null = null;
  inFlight = 0;
  /** Put to sleep (vLLM sleep mode level 1, sleep-mode.ts): its weights are in host memory until it is woken. */
  asleep = false;
  /** GPU memory its runtime process uses, as nvidia-smi last said; null without one. */
  gpuMemoryBytes: number | null = null;
  /** When a pending restart is due (ms since epoch), or null. */
  restartAt: number | null = null;
  /** A restart in progress, so terminate can wait for it to be cancelled. */
  starting: Promise<unknown> | null = null;
  /**
   * Aborted when the replica is removed (DELETE .../replicas/{id}): its start, or a
   * restart pending or loading, stops there, and nothing starts it again.
   */
  readonly removal = new AbortController();
  readonly createdTs = Math.floor(Date.now() / 1000);
  private restartPolicy: RestartPolicy | null = null;

  constructor(
    readonly index: number,
    readonly uid: string,
    readonly gpuIndexes: number[],
  ) {}

  restarts(settings: RestartSettings): RestartPolicy {
    this.restartPolicy ??= new RestartPolicy(settings);
    return this.restartPolicy;
  }

  transition(to: InstanceState, errorMessage: string | null = null): void {
    assertTransition(`replica ${this.uid}`, this.status, to);
    this.status = to;
    if (errorMessage !== null) this.errorMessage = errorMessage;
  }

  /** The record of GET /v1/models/{uid}/replicas and of `replica_statuses`. */
  toRecord(): Record<string, unknown> {
    return {
      replica_id: this.index,
      replica_model_uid: this.uid,
      worker_address: this.runtime?.address ?? null,
      status: this.status,
      created_ts: this.createdTs,
      error_message: this.errorMessage,
      // A dead runtime's pid may be another process's by now: one to kill -9 by mistake.
      pid: this.runtime && !this.runtime.dead ? this.runtime.pid : null,
      in_flight: this.inFlight,
      sleeping: this.asleep,
      restarts: this.restartPolicy?.recentAttempts ?? 0,
      accelerators: this.gpuIndexes.map(String),
      // Cluster mode: the Ray node it runs on (absent locally).
      ...(this.runtime?.node ? { node: { node_id: this.runtime.node.id, address: this.runtime.node.address, hostname: this.runtime.node.hostname, gpu_ids: this.runtime.node.gpuIds } } : {}),
    };
  }
}
