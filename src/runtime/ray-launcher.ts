import type { LifecycleTimings } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { ClusterAgent, Placement } from './cluster-agent.js';
import type { ClusterKeys } from './cluster-keys.js';
import { ConnectedRuntime } from './connected-runtime.js';
import { RuntimeConnection } from './runtime-connection.js';
import type { ReadyInfo, Runtime, RuntimeLauncher, RuntimeNode, StartOptions } from './runtime.js';
import { RuntimeFailure } from './runtime-failure.js';
import { nodeRuntimeEntry, runtimeKindFor } from './runtime-kind.js';

export interface RayLauncherOptions {
  agent: ClusterAgent;
  keys: ClusterKeys;
  /** The address of this host that every Ray node can reach; the sockets bind on it. */
  bindHost: string;
  /** CPUs each replica asks Ray for (a launch has no field for it). */
  cpusPerReplica: number;
  /** The python-runtime folder, the same on every node; the Node runtime is built beside it. */
  runtimeRoot: string;
  timings: LifecycleTimings;
  logger: Logger;
}

// After its connection drops, how long we wait for the agent to say why (exit code, node lost).
const EXIT_AFTER_DISCONNECT_MS = 300;

/**
 * Starts each replica as a Ray actor (docs/cluster.md). The actor starts the usual
 * runtime process on its node, which connects back to this control plane over
 * tcp:// with the cluster's CURVE keys: the same ROUTER/DEALER pair and protocol as
 * local mode, so everything above the launcher is shared.
 */
export class RayLauncher implements RuntimeLauncher {
  /** The actor process of each replica uid now placed (a restart replaces the entry). */
  private readonly actors = new Map<string, RayActorProcess>();

  constructor(private readonly options: RayLauncherOptions) {
    options.agent.onActorExit((replica, reason) => this.actors.get(replica)?.exited(reason));
  }

  async start(start: StartOptions): Promise<Runtime> {
    const { agent, keys, bindHost, cpusPerReplica, timings, logger } = this.options;
    const log = logger.child({ model_uid: start.load.model_uid, replica: start.replicaUid });
    if (start.signal.aborted) throw new RuntimeFailure('cancelled', 'The launch was cancelled');

    const connection = new RuntimeConnection(start.replicaUid, timings, log);
    const endpoints = await connection.bindSecure({ host: bindHost, server: keys.server });
    let placement: Placement;
    try {
      placement = await agent.startActor({
        replica: start.replicaUid,
        num_cpus: cpusPerReplica,
        num_gpus: start.gpuIndexes.length,
        worker_ip: start.workerIp,
        args: ['--data', endpoints.data, '--control', endpoints.control, `--replica=${start.replicaUid}`, '--heartbeat-timeout', String(timings.heartbeatTimeoutMs / 1000)],
        // The llama.cpp engine's runtime is Node's: this program at the same path on every node (one image).
        command: runtimeKindFor(start.load.engine) === 'node' ? [process.execPath, nodeRuntimeEntry(this.options.runtimeRoot)] : undefined,
        env: {
          ...start.envs,
          HANGAR_CURVE_SERVER_KEY: keys.server.publicKey,
          HANGAR_CURVE_PUBLIC_KEY: keys.client.publicKey,
          HANGAR_CURVE_SECRET_KEY: keys.client.secretKey,
        },
      });
    } catch (err) {
      await connection.close();
      throw err;
    }
    log.info({ node_ip: placement.node_ip, node_id: placement.node_id, pid: placement.pid }, 'replica placed on a Ray node');
    const actor = new RayActorProcess(agent, start.replicaUid, connection, placement, timings, () => {
      if (this.actors.get(start.replicaUid) === actor) this.actors.delete(start.replicaUid);
    });
    this.actors.set(start.replicaUid, actor);

    const onCancel = (): void => connection.failLoad(new RuntimeFailure('cancelled', 'The launch was cancelled'));
    if (start.signal.aborted) onCancel();
    start.signal.addEventListener('abort', onCancel, { once: true });
    try {
      const ready = await connection.load(start.load, start.onProgress);
      return new RayRuntime(start.replicaUid, connection, actor, ready);
    } catch (err) {
      await actor.stop();
      throw err instanceof RuntimeFailure && err.kind !== 'cancelled' ? new RuntimeFailure(err.kind, `${err.message}${whereHint(err, placement)}`) : err;
    } finally {
      start.signal.removeEventListener('abort', onCancel);
    }
  }
}

/**
 * Says which node a load failed on, and, when a model file was missing there, that a
 * model_uri must be reachable from every node: the runtime only knows its own machine.
 */
function whereHint(err: RuntimeFailure, placement: Placement): string {
  const where = ` (on Ray node ${placement.node_ip}, ${placement.hostname})`;
  if (err.kind === 'invalid' && /does not exist/.test(err.message)) {
    return `${where}; in cluster mode a model_uri must be a path every node can reach (a shared folder) or a hub model id`;
  }
  return where;
}

/** One replica's actor: how it ends (agent events, connection loss) and how it is stopped. */
class RayActorProcess {
  private hasExited = false;
  private exitWaiters: Array<() => void> = [];
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly agent: ClusterAgent,
    private readonly replicaUid: string,
    private readonly connection: RuntimeConnection,
    readonly placement: Placement,
    private readonly timings: LifecycleTimings,
    /** Called once it is stopped, so the launcher forgets it. */
    private readonly forget: () => void,
  ) {
    connection.onConnectionLost(() => void this.onConnectionLost());
    // Declared dead while the actor may live (no heartbeat, DEAD): free its resources.
    connection.onDeath(() => {
      if (!this.hasExited) void this.stop();
    });
  }

  /** The agent saw the actor or its runtime end. */
  exited(reason: string): void {
    if (this.hasExited) return;
    this.hasExited = true;
    this.connection.markDead(reason);
    for (const wake of this.exitWaiters) wake();
    this.exitWaiters = [];
  }

  private async onConnectionLost(): Promise<void> {
    if (this.stopping || (await this.exitsWithin(EXIT_AFTER_DISCONNECT_MS))) return;
    const ms = this.timings.connectionTimeoutMs;
    this.connection.markDead(`the runtime on Ray node ${this.placement.node_ip} stopped answering (no ZMTP heartbeat for ${ms} ms; node lost, frozen or unreachable)`);
  }

  stop(): Promise<void> {
    this.stopping ??= this.escalate();
    return this.stopping;
  }

  /** Ask over the control socket, wait; then the agent signals the process and kills the actor. */
  private async escalate(): Promise<void> {
    if (!this.connection.isDead) {
      this.connection.requestShutdown();
      await this.exitsWithin(this.timings.shutdownGraceMs);
    }
    await this.agent.stopActor(this.replicaUid, this.timings.terminateGraceMs).catch(() => undefined);
    this.hasExited = true;
    await this.connection.close();
    this.forget();
  }

  private exitsWithin(ms: number): Promise<boolean> {
    if (this.hasExited) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.exitWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

class RayRuntime extends ConnectedRuntime {
  readonly node: RuntimeNode;

  constructor(replicaUid: string, connection: RuntimeConnection, private readonly actor: RayActorProcess, ready: ReadyInfo) {
    super(replicaUid, connection, ready);
    const p = actor.placement;
    this.node = { id: p.node_id, address: p.node_ip, hostname: p.hostname, gpuIds: p.gpu_ids };
  }

  get pid(): number {
    return this.actor.placement.pid;
  }

  get address(): string {
    return `ray://${this.node.address}/${this.replicaUid}`;
  }

  terminate(): Promise<void> {
    return this.actor.stop();
  }
}
