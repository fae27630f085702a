import os from 'node:os';
import type { FastifyPluginAsync } from 'fastify';
import { needs } from '../auth/route-permission.js';
import type { ClusterWorker, Supervisor } from '../../supervisor/supervisor.js';

export interface ServiceRouteOptions {
  supervisor: Supervisor;
  gpuCount: number;
  version: string;
  startedAt: number;
  /** Read per request: the first database user turns authentication on. */
  authEnabled: () => boolean;
}

/** Health and cluster routes (contract §5). */
export const serviceRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (app, options) => {
  const { supervisor, gpuCount, version, startedAt, authEnabled } = options;
  const workerAddress = 'local';

  app.get('/status', { schema: { tags: ['service'] } }, async () => {
    const cluster = await supervisor.clusterWorkers();
    if (cluster) {
      return {
        uptime: Math.floor((Date.now() - startedAt) / 1000),
        workers: Object.fromEntries(cluster.map((w) => [w.name, { update_time: Date.now() / 1000, failure_remaining_count: 5, status: nodeStatus(w) }])),
      };
    }
    return localStatus();
  });

  const localStatus = (): Record<string, unknown> => ({
    uptime: Math.floor((Date.now() - startedAt) / 1000),
    workers: {
      [workerAddress]: {
        update_time: Date.now() / 1000,
        failure_remaining_count: 5,
        status: { cpu: cpuStatus() },
      },
    },
  });

  app.get('/v1/cluster/auth', { schema: { tags: ['service'] } }, async () => ({ auth: authEnabled() }));

  app.get('/v1/cluster/devices', { ...needs('models:list'), schema: { tags: ['service'] } }, async () => gpuCount);

  app.get('/v1/cluster/version', { ...needs('admin'), schema: { tags: ['service'] } }, async () => ({
    version,
    'full-revisionid': null,
    dirty: false,
    error: null,
    date: null,
  }));

  app.get('/v1/cluster/info', { ...needs('admin'), schema: { tags: ['service'] } }, async () => {
    const cluster = await supervisor.clusterWorkers();
    if (cluster) {
      return [
        { node_type: 'Supervisor', ip_address: 'control-plane', gpu_count: 0, gpu_vram_total: 0 },
        ...cluster.map((w) => ({ node_type: 'Worker', ip_address: w.name, gpu_count: w.node.total.GPU, gpu_vram_total: 0, ...rayNode(w) })),
      ];
    }
    return [
      { node_type: 'Supervisor', ip_address: workerAddress, gpu_count: 0, gpu_vram_total: 0 },
      { node_type: 'Worker', ip_address: workerAddress, gpu_count: gpuCount, gpu_vram_total: 0 },
    ];
  });

  app.get('/v1/workers', { ...needs('admin'), schema: { tags: ['service'] } }, async () => {
    const cluster = await supervisor.clusterWorkers();
    if (cluster) {
      return cluster.map((w) => ({
        'work-ip': w.name,
        models: Object.fromEntries([...w.replicas].map(([uid, instance]) => [uid, instance.describe()])),
        ...rayNode(w),
      }));
    }
    return [
      {
        'work-ip': workerAddress,
        models: Object.fromEntries(supervisor.listReady().flatMap((i) => i.replicas.map((r) => [r.uid, i.describe()]))),
      },
    ];
  });
};

/** A Ray node's own facts, added to each cluster worker entry (ours, beyond Xinference's fields). */
function rayNode(w: ClusterWorker): Record<string, unknown> {
  const { node } = w;
  return {
    node_id: node.node_id,
    address: node.address,
    hostname: node.hostname,
    is_head: node.is_head,
    resources: { total: node.total, free: node.free },
    replicas: [...w.replicas.keys()],
  };
}

function nodeStatus(w: ClusterWorker): Record<string, unknown> {
  const { total, free } = w.node;
  return {
    cpu: { total: total.CPU, available: free.CPU, memory_total: total.memory_bytes, memory_available: free.memory_bytes },
    gpu: { total: total.GPU, available: free.GPU },
    custom: total.custom,
    node_id: w.node.node_id,
    // How many, not which: /status is public, and model uids are for `models:list`
    // (until 2026-11-29 the uids were here; /v1/workers, admin only, still lists them).
    replica_count: w.replicas.size,
  };
}

function cpuStatus(): Record<string, number> {
  const total = os.cpus().length;
  const load = os.loadavg()[0] ?? 0;
  return {
    usage: Math.min(1, load / Math.max(1, total)),
    total,
    memory_used: os.totalmem() - os.freemem(),
    memory_available: os.freemem(),
    memory_total: os.totalmem(),
  };
}
