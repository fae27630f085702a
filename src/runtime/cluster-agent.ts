import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import type { Logger } from '../logging/logger.js';
import { HangarError } from '../errors/hangar-error.js';
import { RuntimeFailure } from './runtime-failure.js';

/** A Ray node as the agent reports it (python-runtime/hangar_cluster/placement.py). */
export interface ClusterNode {
  node_id: string;
  address: string;
  hostname: string;
  is_head: boolean;
  total: NodeResources;
  free: NodeResources;
}

export interface NodeResources {
  CPU: number;
  GPU: number;
  memory_bytes: number;
  custom: Record<string, number>;
}

/** Where the agent put a replica's actor. */
export interface Placement {
  node_id: string;
  node_ip: string;
  hostname: string;
  pid: number;
  gpu_ids: string[];
}

export interface ActorRequest {
  replica: string;
  num_cpus: number;
  num_gpus: number;
  worker_ip?: string | undefined;
  /** The runtime's command line after `python -m hangar_runtime` (the actor adds --parent-pid). */
  args: string[];
  /** The program (and its first arguments) instead of `python -m hangar_runtime`: the Node runtime's. */
  command?: string[] | undefined;
  /** Extra environment for the runtime: the launch's `envs` and the CURVE keys. Never logged. */
  env: Record<string, string>;
}

export interface AgentOptions {
  python: string;
  runtimeRoot: string;
  /** `ray://host:port`, a GCS `host:port`, or `auto`. */
  address: string;
  placementTimeoutMs: number;
  logger: Logger;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: RuntimeFailure | HangarError) => void;
}

// Joining a cluster imports Ray and connects to its GCS: a few seconds, more on a busy head.
const AGENT_READY_TIMEOUT_MS = 60_000;
/** How long a node listing may take: Ray answers it in milliseconds when it is well. */
const NODES_TIMEOUT_MS = 5_000;

/**
 * The control plane's end of the cluster agent (`python -m hangar_cluster`), a Ray
 * driver: Node cannot call Ray, so this long-lived child process does, and the two
 * speak JSON lines over its stdin/stdout (docs/cluster.md, "The cluster agent").
 */
export class ClusterAgent {
  private readonly pending = new Map<number, Pending>();
  /** The node listing in progress (nodes()), shared by its callers. */
  private listing: Promise<ClusterNode[]> | null = null;
  private readonly exitListeners: Array<(replica: string, reason: string) => void> = [];
  private nextId = 1;
  private goneReason: string | null = null;
  private closing = false;
  nodeIp = '';
  rayVersion = '';

  private constructor(
    private readonly child: ResultPromise,
    private readonly logger: Logger,
  ) {}

  /** Starts the agent and resolves once it has joined the cluster; rejects with the agent's own words otherwise. */
  static async start(options: AgentOptions): Promise<ClusterAgent> {
    const child = execa(options.python, ['-m', 'hangar_cluster', '--address', options.address, '--runtime-root', options.runtimeRoot, '--placement-timeout', String(options.placementTimeoutMs / 1000)], {
      cwd: options.runtimeRoot,
      env: { PYTHONPATH: options.runtimeRoot, PYTHONUNBUFFERED: '1' },
      extendEnv: true,
      reject: false,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
    });
    const agent = new ClusterAgent(child, options.logger.child({ source: 'cluster-agent' }));
    // A write racing the agent's death fails with EPIPE; the exit handler reports the death,
    // and an unhandled stream error would take the whole control plane down with it.
    child.stdin?.on('error', (err) => agent.logger.debug({ err }, 'writing to the cluster agent failed'));
    await agent.listenUntilReady(options.address);
    return agent;
  }

  /** Forwards the agent's stderr to our log and reads its stdout for good; resolves on its `ready` line. */
  private listenUntilReady(address: string): Promise<void> {
    const log = this.logger;
    const lastErr: string[] = [];
    createInterface({ input: this.child.stderr! }).on('line', (line) => {
      if (line.length === 0) return;
      log.info(line);
      lastErr.push(line);
      if (lastErr.length > 5) lastErr.shift();
    });
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the cluster agent did not join ${address} within ${AGENT_READY_TIMEOUT_MS / 1000} s`)), AGENT_READY_TIMEOUT_MS);
      createInterface({ input: this.child.stdout! }).on('line', (line) => {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line) as Record<string, unknown>;
        } catch {
          log.warn({ line: line.slice(0, 200) }, 'unreadable line from the cluster agent ignored');
          return;
        }
        if (message.event === 'ready') {
          clearTimeout(timer);
          this.nodeIp = String(message.node_ip ?? '');
          this.rayVersion = String(message.ray_version ?? '');
          resolve();
        } else if (message.event === 'fatal') {
          clearTimeout(timer);
          reject(new Error(String(message.message)));
        } else {
          this.dispatch(message);
        }
      });
      void this.child.then((result) => {
        clearTimeout(timer);
        const how = result.signal ? `signal ${result.signal}` : `exit code ${String(result.exitCode)}`;
        this.goneReason = `the cluster agent ended (${how})`;
        reject(new Error(`${this.goneReason}${lastErr.length > 0 ? `: ${lastErr.join(' | ')}` : ''}`));
        for (const p of this.pending.values()) p.reject(this.goneError());
        this.pending.clear();
        if (!this.closing) log.error(`${this.goneReason}; replicas on the cluster can no longer be started or watched`);
      });
    });
  }

  private dispatch(message: Record<string, unknown>): void {
    if (message.event === 'exited') {
      for (const listener of this.exitListeners) listener(String(message.replica), String(message.reason));
      return;
    }
    if (typeof message.id !== 'number') {
      this.logger.warn({ event: message.event }, `cluster agent: ${String(message.message ?? 'unexpected message')}`);
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.ok === true) pending.resolve(message.result);
    else pending.reject(new RuntimeFailure(message.kind === 'no_fit' ? 'no_fit' : 'internal', String(message.message ?? 'cluster agent request failed')));
  }

  /**
   * Without its agent the service cannot place or start anything on the cluster: a
   * 503 (the cluster is unavailable, as GET /status says), not a model that failed.
   */
  private goneError(): HangarError {
    return new HangarError('cluster_unavailable', [this.goneReason ?? 'the cluster agent ended']);
  }

  private request<T>(op: string, body: Record<string, unknown>): Promise<T> {
    if (this.goneReason) return Promise.reject(this.goneError());
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, op, ...body })}\n`);
    });
  }

  /** Places an actor for the replica and starts its runtime; rejects with kind `no_fit` when no node can take it. */
  startActor(request: ActorRequest): Promise<Placement> {
    return this.request<Placement>('start', { ...request });
  }

  /** SIGTERM, wait, SIGKILL the replica's runtime, then kill its actor. */
  stopActor(replica: string, graceMs: number): Promise<void> {
    return this.request<unknown>('stop', { replica, grace_s: graceMs / 1000 }).then(() => undefined);
  }

  /**
   * The live nodes. One listing at a time, shared by every caller while it runs: the
   * agent answers each in a thread of its own, and with Ray's GCS stopped that thread
   * never returns, so the public GET /status must not start one per call. Callers wait
   * at most NODES_TIMEOUT_MS (a stopped GCS held them with no end until 2026-11-29);
   * until that listing's late answer, the next callers get the same 503 at once.
   */
  nodes(): Promise<ClusterNode[]> {
    if (this.listing) return this.listing;
    const asked = this.request<{ nodes: ClusterNode[] }>('info', {});
    let timer: NodeJS.Timeout | undefined;
    const listing = Promise.race([
      asked.then((r) => r.nodes),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new HangarError('cluster_unavailable', [`Ray did not answer within ${NODES_TIMEOUT_MS / 1000} s (its GCS may be down or stopped)`])), NODES_TIMEOUT_MS);
        timer.unref();
      }),
    ]);
    this.listing = listing;
    const done = (): void => {
      clearTimeout(timer);
      if (this.listing === listing) this.listing = null;
    };
    asked.then(done, done);
    return listing;
  }

  /** An actor or its runtime ended without being stopped (node lost, process crashed). */
  onActorExit(listener: (replica: string, reason: string) => void): void {
    this.exitListeners.push(listener);
  }

  /** Closing stdin tells the agent to kill its actors and leave the cluster. */
  async close(): Promise<void> {
    this.closing = true;
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.child;
    clearTimeout(timer);
  }
}
