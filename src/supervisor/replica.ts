import type { Runtime } from '../runtime/runtime.js';
import { assertTransition, type InstanceState } from './instance-state.js';

/** One replica of a model instance: `<uid>-<n>`, one runtime process. */
export class Replica {
  status: InstanceState = 'CREATING';
  progress = 0;
  errorMessage: string | null = null;
  runtime: Runtime | null = null;
  inFlight = 0;
  readonly createdTs = Math.floor(Date.now() / 1000);

  constructor(
    readonly index: number,
    readonly uid: string,
    readonly gpuIndexes: number[],
  ) {}

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
      pid: this.runtime?.pid ?? null,
      in_flight: this.inFlight,
      accelerators: this.gpuIndexes.map(String),
    };
  }
}
