import type { ModelType } from '../registry/index.js';
import type { RuntimeStats } from '../runtime/runtime.js';

/** A launch (POST /v1/models until READY, or until it failed or was cancelled). */
export interface LaunchEvent {
  modelUid: string;
  modelName: string;
  modelType: ModelType;
  outcome: 'ready' | 'failed';
  /** Loaded by a request naming an on-demand entry, not launched by hand. */
  onDemand: boolean;
  seconds: number;
}

/**
 * A model unloaded by policy: idle past its keep_alive, or evicted to make room for
 * another (`memory`: terminated; `sleep`: put to sleep, vLLM sleep mode).
 */
export interface UnloadEvent {
  modelUid: string;
  modelName: string;
  modelType: ModelType;
  reason: 'idle' | 'memory' | 'sleep';
}

/** A sleeping model woken for a request (sleep-mode.ts), or a wake that failed. */
export interface WakeEvent {
  modelUid: string;
  modelName: string;
  modelType: ModelType;
  outcome: 'ready' | 'failed';
  seconds: number;
}

/** A restart of a replica whose runtime died. */
export interface RestartEvent {
  modelUid: string;
  modelName: string;
  modelType: ModelType;
  replica: string;
}

/** What one running replica looks like now, for gauges read at scrape time. */
export interface ReplicaSnapshot {
  modelUid: string;
  modelName: string;
  modelType: ModelType;
  replica: string;
  pid: number;
  /** Whether the runtime runs on this host (its pid is ours to read in /proc), not on a cluster node. */
  local: boolean;
  gpuIndexes: number[];
  /** What nvidia-smi last reported for its process; null without GPUs. */
  gpuMemoryBytes: number | null;
  /** Calls the control plane has sent and not yet had answered. */
  pendingCalls: number;
  /** The runtime's own report (docs/runtime-protocol.md, "Stats"); null before its first. */
  stats: RuntimeStats | null;
}

export interface LifecycleListener {
  launched?(event: LaunchEvent): void;
  restarted?(event: RestartEvent): void;
  unloaded?(event: UnloadEvent): void;
  woken?(event: WakeEvent): void;
  /** The instance is gone (terminated, or a failed launch's record replaced): what was kept per uid may go. */
  terminated?(modelUid: string): void;
}

/**
 * The supervisor's lifecycle as events for whoever counts them (the metrics in api/).
 * The supervisor knows nothing of Prometheus; a listener that throws is its own bug
 * and must not break a launch, so failures are swallowed here.
 */
export class LifecycleEvents {
  private readonly listeners: LifecycleListener[] = [];

  listen(listener: LifecycleListener): void {
    this.listeners.push(listener);
  }

  launched(event: LaunchEvent): void {
    for (const l of this.listeners) safely(() => l.launched?.(event));
  }

  restarted(event: RestartEvent): void {
    for (const l of this.listeners) safely(() => l.restarted?.(event));
  }

  unloaded(event: UnloadEvent): void {
    for (const l of this.listeners) safely(() => l.unloaded?.(event));
  }

  woken(event: WakeEvent): void {
    for (const l of this.listeners) safely(() => l.woken?.(event));
  }

  terminated(modelUid: string): void {
    for (const l of this.listeners) safely(() => l.terminated?.(modelUid));
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // see the class comment
  }
}
