import type { LaunchRequest } from './launch-request.js';

/** A saved model that did not come back at start, and why. */
export interface UnrestoredInstance {
  uid: string;
  request: LaunchRequest;
  reason: string;
  /** Seconds since the epoch, when the restore failed. */
  failedTs: number;
  /** Not tried yet: waiting its turn at start (saved-models.ts restores a few at a time). */
  waiting: boolean;
}

/**
 * Saved models the last start could not bring back: a registration that no longer
 * loads (truncated, invalid, now clashing with a built-in), a model path that is gone,
 * a load that failed. They stay in the saved state and in the model lists, in ERROR
 * with the reason, until a restore succeeds (at the next start, or by
 * `POST /v1/models/{uid}/restore`) or the user terminates them: a repair must find
 * them where they were.
 */
export class UnrestoredInstances {
  private readonly entries = new Map<string, UnrestoredInstance>();

  keep(uid: string, request: LaunchRequest, reason: string, waiting = false): void {
    this.entries.set(uid, { uid, request, reason, failedTs: Math.floor(Date.now() / 1000), waiting });
  }

  forget(uid: string): boolean {
    return this.entries.delete(uid);
  }

  get(uid: string): UnrestoredInstance | undefined {
    return this.entries.get(uid);
  }

  list(): UnrestoredInstance[] {
    return [...this.entries.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  }
}

/** GET /v1/models item and GET /v1/models/{uid} for a model that is saved but not running. */
export function describeUnrestored(entry: UnrestoredInstance): Record<string, unknown> {
  return {
    id: entry.uid,
    object: 'model',
    created: entry.failedTs,
    owned_by: 'hangar',
    model_type: entry.request.model_type,
    model_name: entry.request.model_name,
    model_engine: entry.request.model_engine ?? null,
    replica: entry.request.replica,
    address: null,
    accelerators: [],
    model_ability: [],
    // One waiting its turn is launching, as far as a client can tell; it has not failed.
    status: entry.waiting ? 'CREATING' : 'ERROR',
    error_message: entry.waiting ? null : entry.reason,
  };
}

/** GET /v1/models/instances item, in the shape of ModelInstance.toInstanceRecord. */
export function unrestoredInstanceRecord(entry: UnrestoredInstance): Record<string, unknown> {
  return {
    model_name: entry.request.model_name,
    model_uid: entry.uid,
    model_type: entry.request.model_type,
    model_engine: entry.request.model_engine ?? null,
    model_version: null,
    model_ability: [],
    replica: entry.request.replica,
    status: entry.waiting ? 'CREATING' : 'ERROR',
    instance_created_ts: entry.failedTs,
    n_worker: 1,
    error_message: entry.waiting ? null : entry.reason,
    replica_statuses: [],
  };
}
