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
      for (const replica of instance.replicas) if (replica.runtime?.node?.id === node.node_id) replicas.set(replica.uid, instance);
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
    throw new HangarError('runtime_unavailable', ['cluster', err instanceof Error ? err.message : String(err)], { cause: err });
  }
}
