import { HangarError } from '../errors/hangar-error.js';
import { EventLog } from './event-log.js';
import type { LaunchRequest } from './launch-request.js';
import type { ModelType, ResolvedModel } from '../registry/index.js';
import type { ModelInstance } from './model-instance.js';
import type { SavedLaunches } from './saved-launches.js';
import type { StoredInstance } from './instance-store.js';

/** How long a failed on-demand load is answered from memory before the next request tries again. */
const FAILED_LOAD_HOLD_MS = 5000;

export interface OnDemandSettings {
  /** `--on-demand` / HANGAR_ON_DEMAND=1: requests load the list's models. Off: the list is kept but nothing loads. */
  enabled: boolean;
  /** How long a request waits for a load before 503 with Retry-After (HANGAR_ON_DEMAND_WAIT_MS). */
  waitMs: number;
  /** keep_alive of a model loaded on demand whose entry gives none (HANGAR_ON_DEMAND_KEEP_ALIVE, default 5m). */
  keepAliveMs: number | null;
}

/** A request's hold on a model: given back when its answer is done. */
export interface ModelLease {
  readonly instance: ModelInstance;
  /** `keepAliveMs`: the request's own `keep_alive`, which becomes the model's from now on. */
  release(keepAliveMs?: number | null): void;
}

export interface OnDemandParts {
  list: SavedLaunches | null;
  settings: OnDemandSettings;
  /** The active instance of a uid (CREATING, READY or TERMINATING), if any. */
  instance: (uid: string) => ModelInstance | undefined;
  /** The model an entry's launch names, as a launch resolves it (nothing is started). */
  resolve: (request: LaunchRequest) => ResolvedModel;
  /** Starts a load on demand; the record must be in the table when this returns. */
  load: (uid: string, request: LaunchRequest, events: EventLog) => Promise<ModelInstance>;
  /** Wakes a model put to sleep to make room (sleep-mode.ts); resolves when it serves again. */
  wake: (instance: ModelInstance) => Promise<void>;
  /** Called when a lease ends: the idle unloader decides whether the model goes now. */
  released: (instance: ModelInstance) => void;
}

/**
 * On-demand loading (docs/on-demand.md): the entries kept in `state/on-demand.json`,
 * and the one way a request takes hold of a model, loaded or not. Concurrent first
 * requests for an entry share one launch (the launch's record enters the table before
 * its first await, and an identical launch waits for it); each waits at most
 * `waitMs`, then gets 503 `model_loading` with Retry-After while the load goes on.
 */
export class OnDemandModels {
  /** Each entry's events, kept across its loads and unloads (GET /v1/models/{uid}/events). */
  private readonly logs = new Map<string, EventLog>();
  /**
   * An entry whose load just failed answers that failure for a few seconds instead of
   * loading again: a broken entry must not start a process for every request.
   */
  private readonly failed = new Map<string, { error: unknown; until: number }>();

  constructor(private readonly parts: OnDemandParts) {}

  get enabled(): boolean {
    return this.parts.settings.enabled && this.parts.list !== null;
  }

  get settings(): OnDemandSettings {
    return this.parts.settings;
  }

  entries(): StoredInstance[] {
    return this.parts.list?.list() ?? [];
  }

  entry(uid: string): LaunchRequest | undefined {
    return this.enabled ? this.parts.list?.get(uid) : undefined;
  }

  /** The model type of an entry that is not loaded now (a request of another type is refused before it loads it); else null. */
  unloadedType(uid: string): ModelType | null {
    const entry = this.entry(uid);
    const instance = this.parts.instance(uid);
    if (!entry || (instance && instance.state !== 'TERMINATING')) return null;
    // A request without model_type is an LLM's (contract §1).
    return entry.model_type ?? 'LLM';
  }

  /** The abilities an entry that is not loaded will have (its registration's); null when unknown. */
  unloadedAbilities(uid: string): string[] | null {
    const entry = this.unloadedType(uid) ? this.entry(uid) : undefined;
    if (!entry) return null;
    try {
      return this.parts.resolve(entry).abilities;
    } catch {
      return null; // a registration gone: the load says so
    }
  }

  /**
   * 404 for a uid no instance has, saying so when it is an on-demand entry: `GET /v1/models`
   * lists an entry that is not loaded (UNLOADED), and an Xinference client's terminate of
   * it, or a request on a server started without `--on-demand`, got a bare "not found".
   */
  notFound(uid: string): HangarError {
    const listed = this.parts.list?.get(uid) !== undefined;
    const why = !listed
      ? ''
      : this.enabled
        ? ` (an on-demand entry, not loaded now: remove it with DELETE /v1/on_demand/models/${uid})`
        : ' (an on-demand entry, but this server was started without --on-demand, so nothing loads it)';
    return new HangarError('model_not_found', [`${uid}${why}`], { param: 'model' });
  }

  async put(uid: string, request: LaunchRequest): Promise<void> {
    if (!this.parts.list) throw new HangarError('invalid_field', ['this server keeps no on-demand list'], { param: null });
    await this.parts.list.put(uid, request);
    this.failed.delete(uid);
  }

  async remove(uid: string): Promise<void> {
    if (!(await this.parts.list?.remove(uid))) throw new HangarError('on_demand_not_found', [uid], { param: 'model_uid' });
    this.logs.delete(uid);
    this.failed.delete(uid);
  }

  /** The events of an entry that is not loaded now; null for a uid that is no entry. */
  eventsOf(uid: string): EventLog | null {
    return this.parts.list?.has(uid) ? this.logFor(uid) : null;
  }

  private logFor(uid: string): EventLog {
    let log = this.logs.get(uid);
    if (!log) this.logs.set(uid, (log = new EventLog()));
    return log;
  }

  /**
   * A lease on the model a request names: the running instance, or, for an on-demand
   * entry not running, a load of it first (waited for, within `waitMs`). A uid that is
   * neither gives the usual 404. A model still launching by hand answers as before
   * (503 `model_loading`): the request was not the one to load it.
   */
  async acquire(uid: string): Promise<ModelLease> {
    let instance = this.parts.instance(uid);
    const request = this.entry(uid);
    if (request && (!instance || instance.state === 'TERMINATING')) {
      const failure = this.failed.get(uid);
      if (failure && Date.now() < failure.until) throw failure.error;
      if (instance?.stopping) await instance.stopping.catch(() => {});
      try {
        instance = this.parts.instance(uid) ?? (await this.parts.load(uid, request, this.logFor(uid)));
      } catch (err) {
        this.remember(uid, err);
        throw forCaller(uid, err);
      }
    }
    if (!instance) throw this.notFound(uid);
    // Held from now on, before the load ends: a model that just became READY has its
    // waiting requests' leases, so it is never idle (and evicted) before they run.
    const lease = this.lease(instance);
    if (instance.state === 'CREATING' && instance.onDemand) {
      try {
        await this.waitForLoad(instance, instance.launched);
      } catch (err) {
        lease.release();
        this.remember(uid, err);
        throw forCaller(uid, err);
      }
    }
    if (instance.asleep || instance.sleepChange) {
      try {
        await this.waitForLoad(instance, this.parts.wake(instance));
      } catch (err) {
        lease.release();
        throw err;
      }
    }
    return lease;
  }

  /**
   * Holds a failed load's error for a while, so a broken entry does not start a process
   * per request. Not a state that passes or that another caller made: a load still
   * going (or waiting for busy models), one terminated while it loaded, a budget that
   * another model's end may free: the next request tries again.
   */
  private remember(uid: string, err: unknown): void {
    if (err instanceof HangarError && PASSING_FAILURES.has(err.code)) return;
    this.failed.set(uid, { error: err, until: Date.now() + FAILED_LOAD_HOLD_MS });
  }

  /** Waits for a load (or a wake) for at most `waitMs`, then 503 with Retry-After; the load goes on. */
  private async waitForLoad(instance: ModelInstance, load: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.parts.settings.waitMs);
    });
    try {
      const outcome = await Promise.race([load.then(() => 'ready' as const), timeout]);
      if (outcome === 'timeout') {
        const what = instance.state === 'READY' ? 'waking from sleep' : `loading on demand: ${Math.round(instance.progress * 100)}%`;
        throw new HangarError('model_loading', [`${instance.uid} (${what})`], { headers: { 'retry-after': '5' } });
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private lease(instance: ModelInstance): ModelLease {
    instance.leases++;
    let released = false;
    return {
      instance,
      release: (keepAliveMs?: number | null) => {
        if (released) return;
        released = true;
        instance.leases--;
        instance.lastUsedAt = Date.now();
        if (keepAliveMs !== undefined) instance.keepAliveMs = keepAliveMs;
        this.parts.released(instance);
      },
    };
  }
}

/** Failures of a load on demand that say nothing lasting about the entry (see remember). */
const PASSING_FAILURES: ReadonlySet<string> = new Set(['model_loading', 'launch_cancelled', 'insufficient_memory']);

/**
 * A load on demand that was terminated (DELETE) while a request waited for it: that
 * request cancelled nothing, so it gets the 503 of a model that went away, which clients
 * retry, not the 499 of a cancelled launch, which no OpenAI client knows.
 */
function forCaller(uid: string, err: unknown): unknown {
  if (!(err instanceof HangarError) || err.code !== 'launch_cancelled') return err;
  return new HangarError('runtime_unavailable', [uid, 'it was terminated while it loaded on demand; a new request loads it again'], { headers: { 'retry-after': '1' }, cause: err });
}
