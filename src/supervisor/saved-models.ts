import { availableParallelism } from 'node:os';
import { HangarError } from '../errors/hangar-error.js';
import type { Logger } from '../logging/logger.js';
import { launchCodeRisks, type ResolvedModel } from '../registry/index.js';
import { allocateGpus } from './gpu-allocation.js';
import type { InstanceStore, StoredInstance } from './instance-store.js';
import { withAbsoluteModelPath, type LaunchRequest } from './launch-request.js';
import type { ModelInstance } from './model-instance.js';
import { validateModelUid } from './model-uid.js';
import type { SavedLaunches } from './saved-launches.js';
import { UnrestoredInstances, type UnrestoredInstance } from './unrestored-instances.js';

export interface SavedModelsParts {
  /** Where what should be running is kept across restarts; null keeps nothing. */
  store: InstanceStore | null;
  /** Models launched at every start (`/v1/autostart/models`); null: none. */
  autostart: SavedLaunches | null;
  /** The instance table. */
  instance: (uid: string) => ModelInstance | undefined;
  instances: () => Iterable<ModelInstance>;
  /** The supervisor's launch: resolves when READY. */
  launch: (request: LaunchRequest, authorize?: (risks: string[]) => void) => Promise<string>;
  resolve: (request: LaunchRequest) => ResolvedModel;
  /** GPUs a replica may ask for now (a cluster's grow as GPU nodes join). */
  gpuCount: () => number;
  shuttingDown: () => boolean;
  logger: Logger;
  /** How many saved models load at once at start; default: half the cores, at least 2. */
  restoreConcurrency?: number;
}

/**
 * What outlives the process (docs/requests.md, "Saved state" and "Autostart"): the
 * models running now, saved as what a restart brings back; the saved ones that have
 * not come back (UnrestoredInstances); and the autostart list.
 */
export class SavedModels {
  /** Saved models being restored, or that could not be: kept in the saved state until they run or are terminated. */
  readonly unrestored = new UnrestoredInstances();

  constructor(private readonly parts: SavedModelsParts) {}

  /**
   * Saves the READY models, and the saved ones not back yet, as what should run after
   * a restart. Not while shutting down: stopping the service must not erase what it
   * will bring back.
   */
  async persist(): Promise<void> {
    if (this.parts.shuttingDown() || !this.parts.store) return;
    // A model loaded on demand is loaded again by the next request that names it.
    const running = [...this.parts.instances()].filter((i) => i.state === 'READY' && !i.onDemand);
    const saved = running.map((i) => ({ uid: i.uid, request: asRunning(i) }));
    for (const { uid, request } of this.unrestored.list()) if (!running.some((i) => i.uid === uid)) saved.push({ uid, request });
    await this.parts.store.save(saved);
  }

  /**
   * Relaunches what was running before the last stop (each in the background, with
   * progress as usual). One that fails stays saved and listed in ERROR (UnrestoredInstances).
   */
  async restore(): Promise<number> {
    const saved = (await this.parts.store?.load()) ?? [];
    for (const { uid, request } of saved) this.unrestored.keep(uid, request, 'waiting its turn to be restored', true);
    // A few at a time: fourteen runtimes importing their engines at once on two cores
    // each took seven times as long, long enough for one to miss its heartbeats and be
    // ended by its own watchdog; in turns they are READY one by one, sooner on average.
    // Launches forced past the memory budget come back after the others: in parallel, one
    // that reached the admission first took the room a model within the budget had, and
    // that one was refused at every restart.
    const queue = saved.filter((s) => s.request.force !== true);
    const forced = saved.filter((s) => s.request.force === true);
    const next = async (): Promise<void> => {
      for (let entry = queue.shift(); entry; entry = queue.shift()) {
        // Terminated (forgotten) while it waited its turn: the user no longer wants it back.
        if (this.unrestored.get(entry.uid)) await this.restoreOne(entry.uid, entry.request);
      }
    };
    const width = Math.min(saved.length, this.parts.restoreConcurrency ?? Math.max(2, Math.floor(availableParallelism() / 2)));
    void Promise.all(Array.from({ length: width }, next)).then(() => {
      queue.push(...forced);
      for (let i = 0; i < width; i++) void next();
    });
    if (saved.length > 0) this.parts.logger.info({ models: saved.map((s) => s.uid) }, `restoring ${saved.length} model(s), ${width} at a time`);
    return saved.length;
  }

  private async restoreOne(uid: string, request: LaunchRequest): Promise<void> {
    try {
      await this.parts.launch({ ...request, model_uid: uid });
    } catch (err) {
      const reason = `could not restore model ${uid}: ${(err as Error).message}`;
      // Terminated meanwhile: the user chose to forget it.
      if (!this.unrestored.get(uid)) return;
      this.unrestored.keep(uid, request, reason);
      // A refusal (its registration is gone, its files moved) says all in its code and message; a stack only for a fault of ours.
      const cause = err instanceof HangarError && err.status < 500 ? { code: err.code } : { err };
      this.parts.logger.error({ model_uid: uid, ...cause }, `${reason}; it stays saved, to restore once repaired (POST /v1/models/${uid}/restore)`);
    }
  }

  /**
   * `POST /v1/models/{uid}/restore`: launches a saved model that did not come back, as
   * it was saved; resolves when it is READY. A failure keeps it saved, with the new reason.
   */
  async restoreSaved(uid: string, authorize?: (risks: string[]) => void): Promise<string> {
    const entry = this.unrestored.get(uid);
    if (!entry) {
      const instance = this.parts.instance(uid);
      if (instance?.isActive) return uid;
      // Left down by the restart limit, and saved as it ran: launched again as it ran (a 404 said it was neither).
      if (instance?.state === 'ERROR' && instance.launchFailedAt === null) return this.parts.launch({ ...asRunning(instance), model_uid: uid }, authorize);
      throw new HangarError('model_not_found', [uid], { param: 'model_uid' });
    }
    try {
      return await this.parts.launch({ ...entry.request, model_uid: uid }, authorize);
    } catch (err) {
      if (this.unrestored.get(uid)) this.unrestored.keep(uid, entry.request, `could not restore model ${uid}: ${(err as Error).message}`);
      throw err;
    }
  }

  /** Saved models not running now (restore failed or still going), with no record in the table unless it is in ERROR. */
  listUnrestored(options: { includeErrorRecords: boolean }): UnrestoredInstance[] {
    return this.unrestored.list().filter((e) => {
      const instance = this.parts.instance(e.uid);
      if (!instance) return true;
      return options.includeErrorRecords && instance.state === 'ERROR';
    });
  }

  /**
   * The models that depend on a registration: running or launching instances, saved
   * ones not yet restored, and autostart entries, each named as `uid` or `uid (autostart)`.
   */
  instancesUsing(type: string, name: string): string[] {
    const uids = new Set<string>();
    for (const i of this.parts.instances()) {
      // A failed launch's ERROR record needs nothing; a failed restore's is in `unrestored`.
      if (i.isActive && i.resolved.modelType === type && i.resolved.modelName === name) uids.add(i.uid);
    }
    // A request without model_type is an LLM's (contract §1).
    const names = (request: LaunchRequest): boolean => (request.model_type ?? 'LLM') === type && request.model_name === name;
    for (const e of this.unrestored.list()) if (names(e.request)) uids.add(e.uid);
    for (const e of this.autostartEntries()) if (names(e.request)) uids.add(`${e.uid} (autostart)`);
    return [...uids].sort();
  }

  autostartEntries(): StoredInstance[] {
    return this.parts.autostart?.list() ?? [];
  }

  async addAutostart(request: LaunchRequest, authorize?: (risks: string[]) => void): Promise<string> {
    if (!this.parts.autostart) throw new HangarError('invalid_field', ['this server keeps no autostart list'], { param: null });
    if (request.model_uid !== undefined) validateModelUid(request.model_uid);
    // Checked now: the list is launched later with no caller to ask.
    authorize?.(launchCodeRisks(this.parts.resolve(request), request));
    allocateGpus(request, this.parts.gpuCount());
    const uid = request.model_uid ?? request.model_name;
    await this.parts.autostart.put(uid, withAbsoluteModelPath(request));
    return uid;
  }

  async removeAutostart(uid: string): Promise<void> {
    if (!(await this.parts.autostart?.remove(uid))) throw new HangarError('autostart_not_found', [uid], { param: 'model_uid' });
  }

  startAutostart(): number {
    let started = 0;
    for (const { uid, request } of this.autostartEntries()) {
      if (this.parts.instance(uid)?.isActive) continue;
      started++;
      this.parts.launch({ ...request, model_uid: uid }).catch((err: unknown) => {
        this.parts.logger.error({ model_uid: uid, err }, `could not autostart model ${uid}: ${(err as Error).message}`);
      });
    }
    if (started > 0) this.parts.logger.info({ models: started }, `autostarting ${started} model(s)`);
    return started;
  }
}

/** The launch request that brings an instance back as it runs now: its replicas may have been added or removed. */
function asRunning(instance: ModelInstance): LaunchRequest {
  const replicas = instance.replicas.filter((r) => r.status !== 'TERMINATED');
  const request: LaunchRequest = { ...instance.request, replica: Math.max(1, replicas.length) };
  // A second launch by hand may have set another keep_alive (launch-join.ts).
  if (instance.keepAliveAsked !== undefined) request.keep_alive = instance.keepAliveAsked;
  if (instance.request.gpu_idx !== undefined) request.gpu_idx = replicas.flatMap((r) => r.gpuIndexes);
  return request;
}
