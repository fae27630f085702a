import type { LifecycleTimings } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { ClusterAgent, type ClusterNode } from './cluster-agent.js';
import { loadOrCreateClusterKeys } from './cluster-keys.js';
import { CurveGate } from './curve-gate.js';
import { RayLauncher } from './ray-launcher.js';

export interface RayClusterOptions {
  /** `ray://host:port`, a GCS `host:port`, or `auto`. */
  address: string;
  /** This host's address as the Ray nodes reach it; default: the address Ray sees for it. */
  bindHost: string | null;
  cpusPerReplica: number;
  placementTimeoutMs: number;
  python: string;
  runtimeRoot: string;
  home: string;
  timings: LifecycleTimings;
  logger: Logger;
}

/** Cluster mode's parts, joined: the agent, the CURVE keys and gate, and the launcher on top. */
export class RayCluster {
  private constructor(
    readonly launcher: RayLauncher,
    private readonly agent: ClusterAgent,
    readonly bindHost: string,
  ) {}

  static async connect(options: RayClusterOptions): Promise<RayCluster> {
    const { logger } = options;
    const keys = await loadOrCreateClusterKeys(options.home);
    const gate = await CurveGate.open();
    gate.allow(keys.client.publicKey);
    gate.onRefusal((address) => logger.warn({ address }, 'a connection to a runtime socket was refused: not a key of this cluster'));
    const agent = await ClusterAgent.start({
      python: options.python,
      runtimeRoot: options.runtimeRoot,
      address: options.address,
      placementTimeoutMs: options.placementTimeoutMs,
      logger,
    });
    const bindHost = options.bindHost ?? agent.nodeIp;
    logger.info({ address: options.address, ray_version: agent.rayVersion, bind_host: bindHost }, 'joined the Ray cluster');
    const launcher = new RayLauncher({ agent, keys, bindHost, cpusPerReplica: options.cpusPerReplica, runtimeRoot: options.runtimeRoot, timings: options.timings, logger });
    return new RayCluster(launcher, agent, bindHost);
  }

  nodes(): Promise<ClusterNode[]> {
    return this.agent.nodes();
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
