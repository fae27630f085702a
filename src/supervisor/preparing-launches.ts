import { HangarError } from '../errors/hangar-error.js';

/**
 * A launch that is being prepared before its record can exist: a launch by hub id reads
 * the repo from the hub and registers it first (docs/registry.md), which takes as long
 * as the hub does. Meanwhile its uid reads as CREATING, and a cancel or terminate of
 * the uid stops it: the launch then answers 499 `launch_cancelled` and starts nothing.
 */
export interface PreparingLaunch {
  uid: string;
  /** As asked: the hub id. */
  modelName: string;
  modelType: string;
  modelEngine: string | null;
  replica: number;
  /** Seconds since the epoch. */
  startedTs: number;
}

interface Entry extends PreparingLaunch {
  controller: AbortController;
}

export class PreparingLaunches {
  private readonly entries = new Map<string, Set<Entry>>();

  /** Runs `work` as the preparation of a launch of `launch.uid`; a cancel of the uid ends the wait at once with 499. */
  async run<T>(launch: Omit<PreparingLaunch, 'startedTs'>, work: () => Promise<T>): Promise<T> {
    const entry: Entry = { ...launch, startedTs: Math.floor(Date.now() / 1000), controller: new AbortController() };
    let set = this.entries.get(entry.uid);
    if (!set) this.entries.set(entry.uid, (set = new Set()));
    set.add(entry);
    const cancelled = new Promise<never>((_, reject) => {
      entry.controller.signal.addEventListener('abort', () => reject(new HangarError('launch_cancelled', [entry.uid])), { once: true });
    });
    // The work may go on past a cancel (a hub read ends by its own timeouts); its outcome is then nobody's.
    const working = work();
    working.catch(() => {});
    try {
      return await Promise.race([working, cancelled]);
    } finally {
      set.delete(entry);
      if (set.size === 0) this.entries.delete(entry.uid);
    }
  }

  /** Cancels every preparation of the uid; false when there is none. */
  cancel(uid: string): boolean {
    const set = this.entries.get(uid);
    if (!set) return false;
    for (const entry of set) entry.controller.abort();
    return true;
  }

  get(uid: string): PreparingLaunch | undefined {
    const first = this.entries.get(uid)?.values().next().value;
    return first ? publicView(first) : undefined;
  }

  list(): PreparingLaunch[] {
    return [...this.entries.values()].map((set) => publicView(set.values().next().value!)).sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  }
}

function publicView({ controller: _controller, ...launch }: Entry): PreparingLaunch {
  return launch;
}

/** GET /v1/models/{uid} for a launch being prepared: launching, as far as a client can tell. */
export function describePreparing(entry: PreparingLaunch): Record<string, unknown> {
  return {
    id: entry.uid,
    object: 'model',
    created: entry.startedTs,
    owned_by: 'hangar',
    model_type: entry.modelType,
    model_name: entry.modelName,
    model_engine: entry.modelEngine,
    replica: entry.replica,
    address: null,
    accelerators: [],
    model_ability: [],
    status: 'CREATING',
    error_message: null,
  };
}

/** GET /v1/models/instances item, in the shape of ModelInstance.toInstanceRecord. */
export function preparingInstanceRecord(entry: PreparingLaunch): Record<string, unknown> {
  return {
    model_name: entry.modelName,
    model_uid: entry.uid,
    model_type: entry.modelType,
    model_engine: entry.modelEngine,
    model_version: null,
    model_ability: [],
    replica: entry.replica,
    status: 'CREATING',
    instance_created_ts: entry.startedTs,
    n_worker: 1,
    error_message: null,
    replica_statuses: [],
  };
}
