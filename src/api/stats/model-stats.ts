import type { StatsSettings } from '../../config/stats-settings.js';
import type { ReplicaSnapshot, Supervisor } from '../../supervisor/supervisor.js';
import { ModelSeries, type InferenceOutcome, type ReplicaReading } from './model-series.js';
import { cpuPercent, treeUsage, type TreeUsage } from './process-usage.js';

/**
 * Every running model's series (docs/monitoring.md): the request path adds counts as
 * requests stream and end, and a timer closes a window every `intervalMs` (aligned to
 * the wall clock, so samples of different models share their timestamps). A model's
 * series live while it does: they go when it is terminated or unloaded.
 */
export class ModelStats {
  readonly capacity: number;
  private readonly series = new Map<string, ModelSeries>();
  /** Each local replica's last CPU reading, to turn ticks into a share of a core. */
  private readonly cpuReadings = new Map<string, { pid: number; usage: TreeUsage; atMs: number }>();
  private timer: NodeJS.Timeout | null = null;
  private lastDue = 0;
  /** Microseconds of this process's CPU spent sampling, for the benchmark (bench/stats-series.ts). */
  samplerCpuMicros = 0;
  /** Samples taken (each of every running model). */
  samplerTicks = 0;

  constructor(
    private readonly supervisor: Supervisor,
    readonly settings: StatsSettings,
  ) {
    this.capacity = Math.ceil(settings.retentionMs / settings.intervalMs);
    supervisor.lifecycle.listen({ terminated: (uid) => this.forget(uid) });
  }

  start(): void {
    if (this.timer) return;
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Tokens a stream of `uid` has relayed since the last call. */
  generated(uid: string, tokens: number): void {
    this.of(uid)?.generated(tokens);
  }

  answered(uid: string, outcome: InferenceOutcome): void {
    this.of(uid)?.answered(outcome);
  }

  /** A running model's series; undefined for a uid with none (never sampled, or gone). */
  get(uid: string): ModelSeries | undefined {
    return this.series.get(uid);
  }

  /** Closes the window now: one sample of every running model (and of every model with series that is not ready now). */
  sample(nowMs = Date.now()): void {
    const cpuBefore = process.cpuUsage();
    const byModel = new Map<string, ReplicaSnapshot[]>();
    for (const s of this.supervisor.replicaSnapshots()) {
      let list = byModel.get(s.modelUid);
      if (!list) byModel.set(s.modelUid, (list = []));
      list.push(s);
    }
    const devices = this.supervisor.gpuDevices();
    const seenReplicas = new Set<string>();
    for (const instance of this.supervisor.listReady()) {
      if (!this.series.has(instance.uid)) this.series.set(instance.uid, new ModelSeries(instance.uid, this.capacity));
    }
    for (const [uid, series] of this.series) {
      // A uid the supervisor no longer knows has no history to keep.
      if (!this.supervisor.has(uid)) {
        this.series.delete(uid);
        continue;
      }
      // A model that is not ready now (restarting, failed) still gets its sample: the
      // requests that failed meanwhile belong to this window, not to the one after it recovers.
      let inFlight = 0;
      let queued = 0;
      const readings: ReplicaReading[] = [];
      for (const s of byModel.get(uid) ?? []) {
        inFlight += s.pendingCalls;
        queued += queuedOf(s);
        seenReplicas.add(s.replica);
        readings.push(this.readReplica(s, devices));
      }
      series.sample(nowMs, this.settings.intervalMs / 1000, { inFlight, queued }, readings);
    }
    for (const replica of this.cpuReadings.keys()) if (!seenReplicas.has(replica)) this.cpuReadings.delete(replica);
    const spent = process.cpuUsage(cpuBefore);
    this.samplerCpuMicros += spent.user + spent.system;
    this.samplerTicks++;
  }

  private readReplica(s: ReplicaSnapshot, devices: ReturnType<Supervisor['gpuDevices']>): ReplicaReading {
    const reading: ReplicaReading = { replica: s.replica, cpuPercent: null, rssBytes: s.stats?.rssBytes ?? null, gpuMemoryBytes: s.gpuMemoryBytes, gpuUtilizationPercent: null };
    // /proc and nvidia-smi are this host's: a cluster node's runtime keeps what it reports itself.
    if (!s.local) return reading;
    const gpus = devices.filter((d) => s.gpuIndexes.includes(d.index) && d.utilizationPercent !== null);
    if (gpus.length > 0) reading.gpuUtilizationPercent = gpus.reduce((sum, d) => sum + d.utilizationPercent!, 0) / gpus.length;
    const usage = treeUsage(s.pid);
    if (!usage) return reading;
    const atMs = performance.now();
    const before = this.cpuReadings.get(s.replica);
    this.cpuReadings.set(s.replica, { pid: s.pid, usage, atMs });
    // Over the time that really passed between the two readings (a tick can be late); the
    // first reading of a process (or of a restarted one) has nothing to compare with.
    if (before && before.pid === s.pid && atMs > before.atMs) reading.cpuPercent = cpuPercent(before.usage, usage, (atMs - before.atMs) / 1000);
    reading.rssBytes = usage.rssBytes;
    return reading;
  }

  /** Series for events of a model that is running; nothing for others (an unknown uid must not grow the map). */
  private of(uid: string): ModelSeries | undefined {
    const found = this.series.get(uid);
    if (found || !this.supervisor.has(uid)) return found;
    const created = new ModelSeries(uid, this.capacity);
    this.series.set(uid, created);
    return created;
  }

  private forget(uid: string): void {
    this.series.delete(uid);
  }

  private schedule(): void {
    const interval = this.settings.intervalMs;
    const now = Date.now();
    // The sample is stamped with the boundary it was due at: a timer fires a little late
    // (or, against the wall clock, a millisecond early), and samples must line up, never
    // twice on one boundary, never going back. A wall clock set back (NTP) does not stop
    // the samples until the old time comes round: they go on every interval, stamped
    // on from the last one, until the clock catches up.
    const due = Math.max(now - (now % interval) + interval, this.lastDue + interval);
    this.lastDue = due;
    this.timer = setTimeout(() => {
      try {
        this.sample(due);
      } finally {
        this.schedule();
      }
    }, Math.min(due - now, interval));
    this.timer.unref();
  }
}

/**
 * Calls a replica's runtime holds but is not running: a batching engine runs its last
 * batch, a one-at-a-time engine one call (docs/runtime-protocol.md, "Stats").
 */
function queuedOf(s: ReplicaSnapshot): number {
  const depth = s.stats?.queueDepth ?? 0;
  const running = s.stats && s.stats.batchSteps > 0 ? Math.min(s.stats.batchSize, depth) : Math.min(1, depth);
  return depth - running;
}
