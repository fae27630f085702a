import type { ChunkQueue } from './chunk-queue.js';

/** What the control plane sends in LOAD (docs/runtime-protocol.md, "Handshake and load"). */
export interface LoadSpec {
  model_type: string;
  model_name: string;
  model_uid: string;
  replica_uid: string;
  engine: string;
  model_uri?: string;
  model_id?: string;
  model_hub?: string;
  model_format?: string;
  model_size_in_billions?: number | string;
  quantization?: string;
  launcher?: string;
  launcher_args: Record<string, unknown>;
  engine_kwargs: Record<string, unknown>;
  cache_dir?: string;
  /** How many replicas the model has: a runtime without GPUs sizes its compute threads to its share of the cores. */
  replicas?: number;
  /** Type-specific fields (LLM: chat_template, stop, stop_token_ids, context_length, model_family, model_ability). */
  [field: string]: unknown;
}

export interface ReadyInfo {
  pid: number;
  engine: string;
  abilities: string[];
  description: Record<string, unknown>;
}

/** What a runtime reports about itself in each PONG (docs/runtime-protocol.md, "Stats"). */
export interface RuntimeStats {
  queueDepth: number;
  batchSize: number;
  batchSteps: number;
  batchStepCalls: number;
  rssBytes: number;
}

export interface LoadProgress {
  progress: number;
  stage: string;
  message: string;
}

export interface StartOptions {
  replicaUid: string;
  load: LoadSpec;
  /** Extra environment for the runtime process (the launch's `envs`). */
  envs: Record<string, string>;
  /** GPUs this replica may use; empty means CPU only. On a cluster only their count matters: Ray picks them. */
  gpuIndexes: number[];
  /** Whether the engine's own work keeps CPU cores busy (false: the simulator); decides a local runtime's session. */
  cpuBound: boolean;
  /** The launch's `worker_ip`: on a cluster, the node to run on. Local mode has one node and ignores it. */
  workerIp?: string | undefined;
  onProgress: (progress: LoadProgress) => void;
  /** Aborting it cancels the start: the process is killed and start() rejects with kind `cancelled`. */
  signal: AbortSignal;
}

/** A cluster node a runtime runs on, as Ray names it. */
export interface RuntimeNode {
  id: string;
  address: string;
  hostname: string;
  gpuIds: string[];
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** One running runtime process, loaded and answering calls. */
export interface Runtime {
  readonly replicaUid: string;
  readonly pid: number;
  /**
   * What the API shows as its address: opaque (`local://<replica>`, `ray://<node ip>/<replica>`).
   * Its socket paths name the home folder and its ports invite strangers, so neither is shown.
   */
  readonly address: string;
  readonly ready: ReadyInfo;
  /** The latest stats the runtime reported (null before its first PONG with them). */
  readonly stats: RuntimeStats | null;
  /** Calls sent to it and not yet answered. */
  readonly pendingCalls: number;
  /** It died (or was stopped): its pid may already be another process's. */
  readonly dead?: boolean;
  /** The cluster node it runs on; absent for local runtimes. */
  readonly node?: RuntimeNode;
  call(method: string, args: unknown[], kwargs: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  stream(method: string, args: unknown[], kwargs: Record<string, unknown>): ChunkQueue<unknown>;
  /** Called once when the runtime dies without being asked to stop; `output` is its last lines, for the operator only. */
  onDeath(listener: (reason: string, output: string) => void): void;
  /** Ask it to stop, escalate to signals, and resolve when the process is gone. */
  terminate(): Promise<void>;
}

/** Places and starts runtimes: locally as child processes (LocalLauncher), or on a Ray cluster (RayLauncher). */
export interface RuntimeLauncher {
  start(options: StartOptions): Promise<Runtime>;
  /** Stops what the launcher keeps of its own (a warm spare); the supervisor calls it last at shutdown. */
  shutdown?(): Promise<void>;
}
