import { HangarError } from '../errors/hangar-error.js';
import type { ClusterNode } from '../runtime/cluster-agent.js';
import type { ModelInstance } from './model-instance.js';

/** What the supervisor needs from a cluster to show it: its live nodes. */
export interface ClusterView {
  nodes(): Promise<ClusterNode[]>;
}

/** One Ray node and the replicas running on it, for /status, /v1/cluster/info and /v1/workers. */
export interface ClusterWorker {
  /** The node's address; nodes sharing an address (several on one host) get `#<node id prefix>`. */
  name: string;
  node: ClusterNode;
  /** Replica uid -> its model's description (Xinference's /v1/workers shape). */
  replicas: Map<string, ModelInstance>;
}

export function clusterWorkers(nodes: ClusterNode[], instances: ModelInstance[]): ClusterWorker[] {
  const perAddress = new Map<string, number>();
  for (const n of nodes) perAddress.set(n.address, (perAddress.get(n.address) ?? 0) + 1);
  return nodes.map((node) => {
    const replicas = new Map<string, ModelInstance>();
    for (const instance of instances) {
      // A failed launch's replicas, and replicas down, keep their last runtime record:
      // listing them showed actors Ray no longer had.
      if (instance.launchFailedAt !== null) continue;
      for (const replica of instance.replicas) {
        if (replica.status === 'ERROR' || replica.status === 'TERMINATED') continue;
        if (replica.runtime?.node?.id === node.node_id) replicas.set(replica.uid, instance);
      }
    }
    const shared = (perAddress.get(node.address) ?? 0) > 1;
    return { name: shared ? `${node.address}#${node.node_id.slice(0, 8)}` : node.address, node, replicas };
  });
}

/** The cluster's live nodes, or 503 `runtime_unavailable` naming why when Ray does not answer. */
export async function liveNodes(cluster: ClusterView): Promise<ClusterNode[]> {
  try {
    return await cluster.nodes();
  } catch (err) {
    if (err instanceof HangarError) throw err;
    throw new HangarError('cluster_unavailable', [err instanceof Error ? err.message : String(err)], { cause: err });
  }
}

/**
 * A launch's `worker_ip` on a cluster: a live node's address, or the `<address>#<node id
 * prefix>` name /v1/workers gives nodes that share one; anything else is a 400 naming the
 * nodes, as Xinference answers ("... is not in the cluster"), not a 503 that invites a retry.
 */
export function requireWorker(nodes: ClusterNode[], workerIp: string): void {
  const [address, prefix = ''] = workerIp.split('#', 2);
  if (nodes.some((n) => n.address === address && n.node_id.startsWith(prefix))) return;
  const names = clusterWorkers(nodes, []).map((w) => w.name);
  throw new HangarError('invalid_worker_ip', [workerIp, names.join(', ') || 'none'], { param: 'worker_ip' });
}

/** The most GPUs one node has: a replica's GPUs must fit on one node. */
export function mostGpus(nodes: ClusterNode[]): number {
  return Math.max(0, ...nodes.map((n) => n.total.GPU));
}
