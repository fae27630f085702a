import type { LifecycleTimings } from '../config/config.js';
import { HangarError } from '../errors/hangar-error.js';
import type { Logger } from '../logging/logger.js';
import type { ResolvedModel } from '../registry/index.js';
import type { Runtime, RuntimeLauncher } from '../runtime/runtime.js';
import { launchKey, type LaunchRequest } from './launch-request.js';
import { ModelInstance } from './model-instance.js';
import { suffixedUid } from './model-uid.js';
import { Replica } from './replica.js';
import { ReplicaRecovery } from './replica-recovery.js';
import { ReplicaScaling } from './replica-scaling.js';
import { launchCodeRisks } from '../registry/index.js';
import type { SavedLaunches } from './saved-launches.js';
import type { StoredInstance } from './instance-store.js';
import { startInstance } from './instance-startup.js';
import { SERVER_SHUTDOWN } from './failure-mapping.js';
import { planLaunch } from './launch-plan.js';
import type { InstanceStore } from './instance-store.js';
import { clusterWorkers, liveNodes, mostGpus, requireWorker, type ClusterView, type ClusterWorker } from './cluster-workers.js';
import { CallStream, callReplica, checkCallable, type CallResult, type CallTarget } from './replica-calls.js';
import { LifecycleEvents, type ReplicaSnapshot } from './lifecycle-events.js';
import type { UnrestoredInstance } from './unrestored-instances.js';
import { SavedModels } from './saved-models.js';
import type { ModelQuery } from './model-query.js';
import { replicaSnapshots } from './replica-snapshots.js';
import type { DeviceUse, MemoryBudgets } from './memory-budget.js';
import { MemoryAccounting } from './memory-accounting.js';
import { OnDemandModels, type ModelLease, type OnDemandSettings } from './on-demand.js';
import { IdleUnload } from './idle-unload.js';
import { GpuMemoryReadings } from './gpu-memory-readings.js';
import type { GpuDeviceReading } from '../runtime/gpu-memory.js';
import { SleepMode } from './sleep-mode.js';
import type { EventLog } from './event-log.js';
import { forgetOldFailedLaunches } from './failed-launches.js';
import { PreparingLaunches, type PreparingLaunch } from './preparing-launches.js';
import { joinByHand } from './launch-join.js';

export type { CallResult, CallTarget } from './replica-calls.js';
export type { LaunchEvent, LifecycleListener, ReplicaSnapshot, RestartEvent, UnloadEvent, WakeEvent } from './lifecycle-events.js';
export type { ClusterView, ClusterWorker } from './cluster-workers.js';
export type { ModelLease, OnDemandSettings } from './on-demand.js';
export type { DeviceUse, MemoryBudgets } from './memory-budget.js';
export type { GpuDeviceReading } from '../runtime/gpu-memory.js';

/** What the supervisor needs from the registry: turn a launch into a runnable model. */
export interface ModelResolver {
  resolve(query: ModelQuery): ResolvedModel;
}

export interface SupervisorOptions {
  resolver: ModelResolver;
  launcher: RuntimeLauncher;
  gpuCount: number;
  cacheDir: string;
  timings: LifecycleTimings;
  /** Where what should be running is kept across restarts; null keeps nothing. */
  store: InstanceStore | null;
  /** `--model-dirs`: where a launch's `model_path` may be; null or absent: anywhere. */
  modelDirs?: readonly string[] | null;
  /** Models launched at every start (`/v1/autostart/models`); absent: none. */
  autostart?: SavedLaunches | null;
  logger: Logger;
  /** Cluster mode: the Ray nodes, to show where replicas run; absent in local mode. */
  cluster?: ClusterView | null;
  /** The memory budgets launches must fit in (docs/on-demand.md); absent: none is checked. */
  memoryBudgets?: (() => MemoryBudgets) | null;
  /** Models loaded when a request names them (`/v1/on_demand/models`); absent: none. */
  onDemandList?: SavedLaunches | null;
  onDemand?: OnDemandSettings;
  /** keep_alive of a model launched by hand that gives none (HANGAR_KEEP_ALIVE); null: never. */
  keepAliveMs?: number | null;
  /** How often idle models are looked for. */
  idleCheckMs?: number;
}

/**
 * The instance table and every lifecycle change: launch, terminate, cancel, and
 * routing calls to replicas. One record per instance (ModelInstance); the table is
 * the only map keyed by uid.
 */
export class Supervisor {
  private readonly instances = new Map<string, ModelInstance>();
  private shuttingDown = false;
  private readonly recovery: ReplicaRecovery;
  private readonly scaling: ReplicaScaling;
  /** Launches and restarts, for metrics. */
  readonly lifecycle = new LifecycleEvents();
  /** Launches being prepared before their record exists (a hub id's repo read and registered). */
  readonly preparing = new PreparingLaunches();
  /** What outlives the process: the saved state, the models not restored yet, the autostart list. */
  readonly saved: SavedModels;
  private readonly memory: MemoryAccounting;
  /** On-demand entries and the leases requests take on models (docs/on-demand.md). */
  readonly onDemand: OnDemandModels;
  private readonly idleUnload: IdleUnload;
  private readonly sleepMode: SleepMode;

  /** GPUs a replica may ask for: this host's, or on a cluster the most any live node has (read at each launch). */
  private gpuCount: number;

  constructor(private readonly options: SupervisorOptions) {
    this.saved = new SavedModels({
      store: options.store,
      autostart: options.autostart ?? null,
      instance: (uid) => this.instances.get(uid),
      instances: () => this.instances.values(),
      launch: (request, authorize) => this.launch(request, true, authorize),
      resolve: (request) => options.resolver.resolve(request),
      gpuCount: () => this.gpuCount,
      shuttingDown: () => this.shuttingDown,
      logger: options.logger,
    });
    this.recovery = new ReplicaRecovery(options.launcher, options.cacheDir, options.timings, options.logger, this.lifecycle);
    this.gpuCount = options.gpuCount;
    this.scaling = new ReplicaScaling({ ...options, gpuCount: () => this.gpuCount, recovery: this.recovery, persist: () => this.persist(), charge: (instance, gpus) => this.memory.chargeReplicas(instance, gpus) });
    this.sleepMode = new SleepMode({
      admit: (instance, charge) => this.memory.admitWake(instance, charge),
      unload: async (instance, why) => {
        instance.events.add('ERROR', why.charAt(0).toUpperCase() + why.slice(1));
        await this.terminate(instance.uid).catch(() => {});
      },
      lifecycle: this.lifecycle,
      logger: options.logger,
    });
    this.memory = new MemoryAccounting({
      budgets: options.memoryBudgets ?? null,
      cacheDir: options.cacheDir,
      resolve: (query) => options.resolver.resolve(query),
      instances: () => this.instances.values(),
      evict: (victim, forUid) => this.unload(victim, `evicted to make room for ${forUid}`, 'memory'),
      sleeper: this.sleepMode,
      onDemandWaitMs: () => this.onDemand.settings.waitMs,
      logger: options.logger,
    });
    this.idleUnload = new IdleUnload({
      instances: () => this.instances.values(),
      unload: (instance, reason) => this.unload(instance, `unloaded: ${reason}`, 'idle'),
      checkEveryMs: options.idleCheckMs ?? 1000,
    });
    this.onDemand = new OnDemandModels({
      list: options.onDemandList ?? null,
      settings: options.onDemand ?? { enabled: false, waitMs: 300_000, keepAliveMs: 300_000 },
      instance: (uid) => (this.instances.get(uid)?.isActive ? this.instances.get(uid) : undefined),
      load: async (uid, request, events) => {
        await this.launch({ ...request, model_uid: uid }, false, undefined, { onDemand: true, events });
        return this.require(uid);
      },
      wake: (instance) => this.sleepMode.wake(instance),
      resolve: (request) => options.resolver.resolve(request),
      released: (instance) => this.idleUnload.released(instance),
    });
    this.idleUnload.start();
    this.gpuReadings = options.gpuCount > 0 ? new GpuMemoryReadings(() => this.instances.values()) : null;
  }

  private readonly gpuReadings: GpuMemoryReadings | null;

  /**
   * A request's hold on the model it names, loading an on-demand entry first (docs/on-demand.md);
   * the model is not unloaded while any lease is held. 404 for a uid that is neither.
   */
  acquire(uid: string): Promise<ModelLease> {
    return this.onDemand.acquire(uid);
  }

  /** Whether a request naming this uid would find a model: running, launching, or an on-demand entry. */
  serves(uid: string): boolean {
    return this.instances.get(uid)?.isActive === true || this.onDemand.entry(uid) !== undefined;
  }

  /** The model name a uid serves: the running instance's, the on-demand entry's, a saved one's that did not come back, a launch's being prepared; else null. */
  modelNameOf(uid: string): string | null {
    const known = this.instances.get(uid)?.resolved.modelName ?? this.onDemand.entry(uid)?.model_name;
    return known ?? this.saved.unrestored.get(uid)?.request.model_name ?? this.preparing.get(uid)?.modelName ?? null;
  }

  /** One replica's memory estimate on CPU, before anything is downloaded (`GET /v1/engines`); null when unknown. */
  estimate(query: ModelQuery): Promise<number | null> {
    return this.memory.estimate(query);
  }

  /** On-demand entries with no active instance now (listed as available, not loaded). */
  onDemandUnloaded(): StoredInstance[] {
    if (!this.onDemand.enabled) return [];
    return this.onDemand.entries().filter((e) => !this.instances.get(e.uid)?.isActive);
  }

  /**
   * On-demand entries that are not READY now, with what to show for each: `UNLOADED`,
   * or the state of a load or unload under way. The model lists show them beside the
   * READY models, so an entry never drops out of a list while its first load runs.
   */
  onDemandNotReady(): Array<{ entry: StoredInstance; status: string }> {
    if (!this.onDemand.enabled) return [];
    return this.onDemand.entries().flatMap((entry) => {
      const instance = this.instances.get(entry.uid);
      if (instance?.state === 'READY') return [];
      return [{ entry, status: instance?.isActive ? instance.state : 'UNLOADED' }];
    });
  }

  /** Each device's budget, what is held and by whom (`GET /v1/memory`). */
  memoryUse(): DeviceUse[] {
    return this.memory.use();
  }

  /** Unloads a model that is no longer wanted (idle, or evicted for memory): an event, a metric, then terminate. */
  private async unload(instance: ModelInstance, why: string, reason: 'idle' | 'memory'): Promise<void> {
    if (instance.state !== 'READY' || this.instances.get(instance.uid) !== instance) return;
    instance.events.add('INFO', why.charAt(0).toUpperCase() + why.slice(1));
    this.options.logger.info({ model_uid: instance.uid, reason }, `model ${instance.uid} ${why}`);
    this.lifecycle.unloaded({ modelUid: instance.uid, modelName: instance.resolved.modelName, modelType: instance.resolved.modelType, reason });
    await this.terminate(instance.uid).catch((err: unknown) => {
      this.options.logger.error({ model_uid: instance.uid, err }, `could not unload ${instance.uid}: ${(err as Error).message}`);
    });
  }

  /** One more replica of a running model (docs/requests.md); resolves when it is READY. */
  addReplica(uid: string, authorize?: (risks: string[]) => void): Promise<Replica> {
    const instance = this.require(uid);
    authorize?.(launchCodeRisks(instance.resolved, instance.request));
    return this.scaling.add(instance);
  }

  /** Drains and stops one replica; the last one is refused (terminate the model instead). */
  removeReplica(uid: string, replicaId: number): Promise<void> {
    return this.scaling.remove(this.require(uid), replicaId);
  }

  /**
   * Launch (contract §3.1). The record enters the table before any await past the checks,
   * so a concurrent identical launch finds it and waits for the same processes.
   */
  async launch(asked: LaunchRequest, waitReady: boolean, authorize?: (risks: string[]) => void, how: LaunchHow = {}): Promise<string> {
    if (this.shuttingDown) throw new HangarError('runtime_unavailable', [asked.model_name, 'the server is shutting down']);
    // On a cluster, the nodes now: a GPU node that joined since the start counts, and a worker_ip is checked.
    const nodes = this.options.cluster ? await liveNodes(this.options.cluster) : null;
    if (nodes) this.gpuCount = mostGpus(nodes);
    if (this.shuttingDown) throw new HangarError('runtime_unavailable', [asked.model_name, 'the server is shutting down']);
    const { request, resolved, gpus: gpuPlan } = planLaunch(asked, { ...this.options, gpuCount: this.gpuCount, resolve: (query) => this.options.resolver.resolve(query) }, authorize);
    if (nodes && request.worker_ip) requireWorker(nodes, request.worker_ip);
    const uid = request.model_uid ?? this.defaultUid(request.model_name);
    const key = launchKey(request);
    const ending = this.instances.get(uid); // the same launch while its uid terminates: a new one once it has (it was a 409)
    if (ending?.state === 'TERMINATING' && ending.key === key) await ending.stopping?.catch(() => {});
    const existing = this.instances.get(uid);
    if (existing?.isActive) {
      if (existing.key !== key || existing.state === 'TERMINATING') throw new HangarError('model_uid_conflict', [uid], { param: 'model_uid' });
      if (how.onDemand !== true) joinByHand(existing, request, this.options.keepAliveMs ?? null);
      if (waitReady) await existing.launched;
      if (how.onDemand !== true) await this.persist();
      return uid;
    }

    const replicas = gpuPlan.map((gpus, i) => new Replica(i, `${uid}-${i}`, gpus));
    const instance = new ModelInstance(uid, request, key, resolved, replicas, how.events);
    instance.onDemand = how.onDemand === true;
    instance.keepAliveMs = request.keep_alive !== undefined ? request.keep_alive : instance.onDemand ? this.onDemand.settings.keepAliveMs : (this.options.keepAliveMs ?? null);
    this.instances.set(uid, instance);
    instance.events.add('INFO', instance.onDemand ? 'Load model on demand' : 'Launch model');
    instance.launched = this.startReplicas(instance);
    instance.launched.catch(() => forgetOldFailedLaunches(this.instances));
    if (waitReady) await instance.launched;
    else {
      instance.launched.catch(() => {});
      // Even without waiting for READY, a launch the budget refuses is answered as refused.
      await instance.admitted;
    }
    return uid;
  }

  private defaultUid(modelName: string): string {
    return this.instances.get(modelName)?.isActive ? suffixedUid(modelName) : modelName;
  }

  private startReplicas(instance: ModelInstance): Promise<void> {
    return startInstance(instance, {
      ...this.options,
      memory: this.memory,
      recovery: this.recovery,
      lifecycle: this.lifecycle,
      release: (refused) => {
        if (this.instances.get(refused.uid) === refused) this.instances.delete(refused.uid);
      },
      restored: (ready) => this.saved.unrestored.forget(ready.uid),
      persist: () => this.persist(),
    });
  }

  /** Terminate (contract §3): a launch in progress is cancelled first; resolves when every process is gone. */
  async terminate(uid: string): Promise<void> {
    // A launch still being prepared (its repo read from the hub): it stops there.
    if (!this.instances.has(uid) && this.preparing.cancel(uid)) return;
    // A saved model that never came back: terminating it is the user's word to forget it.
    if (!this.instances.has(uid) && this.saved.unrestored.forget(uid)) {
      await this.persist();
      return;
    }
    const instance = this.require(uid);
    // A second terminate while the first runs waits for the same one.
    instance.stopping ??= this.stop(instance);
    await instance.stopping;
  }

  private async stop(instance: ModelInstance): Promise<void> {
    const uid = instance.uid;
    if (instance.state === 'CREATING') {
      instance.launchAbort.abort();
      await instance.launched.catch(() => {});
    }
    if (this.instances.get(uid) !== instance) return;
    instance.lifetime.abort();
    instance.transition('TERMINATING', 'Terminate model');
    await Promise.all(instance.replicas.map((r) => r.starting?.catch(() => {})));
    const runtimes = instance.replicas.map((r) => r.runtime).filter((r): r is Runtime => r !== null);
    for (const replica of instance.replicas) if (replica.status === 'READY' || replica.status === 'CREATING') replica.transition('TERMINATING');
    await Promise.all(runtimes.map((r) => r.terminate()));
    for (const replica of instance.replicas) if (replica.status === 'TERMINATING') replica.transition('TERMINATED');
    instance.transition('TERMINATED');
    this.instances.delete(uid);
    this.saved.unrestored.forget(uid);
    this.lifecycle.terminated(uid);
    await this.persist();
  }

  /** Saves what runs now, as what a restart brings back (saved-models.ts). */
  private persist(): Promise<void> {
    return this.saved.persist();
  }

  /**
   * Adds (or replaces) an on-demand entry (docs/on-demand.md), checked now as a launch
   * would be; answers its uid. A uid launched by hand is not taken over.
   */
  async addOnDemand(request: LaunchRequest, authorize?: (risks: string[]) => void): Promise<string> {
    const uid = request.model_uid ?? request.model_name;
    // Checked as a launch is (a model_path that is not there, adapters, code risks, GPUs), then kept.
    const planned = planLaunch({ ...request, model_uid: uid }, { ...this.options, gpuCount: this.gpuCount, resolve: (query) => this.options.resolver.resolve(query) }, authorize).request;
    const running = this.instances.get(uid);
    if (running?.isActive && !running.onDemand) throw new HangarError('model_uid_conflict', [uid], { param: 'model_uid' });
    await this.onDemand.put(uid, planned);
    return uid;
  }

  /** Cancel a launch in progress (contract §3); the instance ends in ERROR. A finished launch is left alone. */
  async cancel(uid: string): Promise<void> {
    if (!this.instances.has(uid) && this.preparing.cancel(uid)) return;
    const instance = this.require(uid);
    if (instance.state !== 'CREATING') return;
    instance.launchAbort.abort();
    await instance.launched.catch(() => {});
  }

  /** READY models, for GET /v1/models. */
  listReady(): ModelInstance[] {
    return this.sorted().filter((i) => i.state === 'READY');
  }

  listInstances(filter: { model_uid?: string | undefined; model_name?: string | undefined }): ModelInstance[] {
    const all = this.sorted().filter((i) => i.state !== 'TERMINATED');
    if (filter.model_uid) return all.filter((i) => i.uid === filter.model_uid);
    if (filter.model_name) return all.filter((i) => i.resolved.modelName === filter.model_name);
    return all;
  }

  private sorted(): ModelInstance[] {
    return [...this.instances.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  }

  /** Every replica with a runtime now, for gauges read at scrape time. */
  replicaSnapshots(): ReplicaSnapshot[] {
    return replicaSnapshots(this.instances.values());
  }

  /** Each GPU's memory and utilization as last read (every few seconds); empty on a host without GPUs. */
  gpuDevices(): GpuDeviceReading[] {
    return this.gpuReadings?.devices ?? [];
  }

  /** Whether a uid names an instance (any state), without the 404 of `require`. */
  has(uid: string): boolean {
    return this.instances.has(uid);
  }

  /**
   * The models that depend on a registration: running or launching instances, saved
   * ones not yet restored, and autostart entries, each named as `uid` or `uid (autostart)`.
   */
  instancesUsing(type: string, name: string): string[] {
    // An on-demand entry loads its registration at the next request: removed from under
    // it, that request answered a 404 naming a model the client never sent.
    const entries = this.onDemand.entries().filter((e) => (e.request.model_type ?? 'LLM') === type && e.request.model_name === name).map((e) => `${e.uid} (on demand)`);
    return [...new Set([...this.saved.instancesUsing(type, name), ...entries])].sort();
  }

  /** A saved model that is not running and has no record (its restore could not even begin), or undefined. */
  unrestoredOnly(uid: string): UnrestoredInstance | undefined {
    return this.instances.has(uid) ? undefined : this.saved.unrestored.get(uid);
  }

  /** A launch of the uid being prepared, while no record of it exists yet. */
  preparingOnly(uid: string): PreparingLaunch | undefined {
    return this.instances.has(uid) ? undefined : this.preparing.get(uid);
  }

  /** The instance of a uid, or 404. */
  require(uid: string): ModelInstance {
    const instance = this.instances.get(uid);
    if (!instance) throw this.onDemand.notFound(uid);
    return instance;
  }

  /** One request/reply call into a replica, round robin, honouring `request_limits`. */
  call(target: CallTarget, method: string, args: unknown[], kwargs: Record<string, unknown>, signal?: AbortSignal): Promise<CallResult> {
    const instance = this.require(target.uid);
    checkCallable(instance, target);
    return callReplica(instance, target, method, args, kwargs, signal);
  }

  /** A streaming call; the caller must read it to the end or `return()` it. */
  stream(target: CallTarget, method: string, args: unknown[], kwargs: Record<string, unknown>): CallStream {
    const instance = this.require(target.uid);
    checkCallable(instance, target);
    return new CallStream(instance, target, method, args, kwargs);
  }

  /** Cluster mode: every live node with the replicas on it; null in local mode. */
  async clusterWorkers(): Promise<ClusterWorker[] | null> {
    if (!this.options.cluster) return null;
    return clusterWorkers(await liveNodes(this.options.cluster), this.sorted());
  }

  /** Stops every model; used when the server shuts down. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    this.idleUnload.stop();
    this.gpuReadings?.stop();
    for (const instance of this.instances.values()) instance.lifetime.abort(SERVER_SHUTDOWN);
    await Promise.all([...this.instances.keys()].map((uid) => this.terminate(uid).catch(() => {})));
    await this.options.launcher.shutdown?.();
  }
}

/** How a launch came about: by hand (the default), or on demand with its entry's event log. */
export interface LaunchHow {
  onDemand?: boolean;
  events?: EventLog;
}
