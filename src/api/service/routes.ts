import os from 'node:os';
import type { FastifyPluginAsync } from 'fastify';
import { needs } from '../auth/route-permission.js';
import type { Supervisor } from '../../supervisor/supervisor.js';

export interface ServiceRouteOptions {
  supervisor: Supervisor;
  gpuCount: number;
  version: string;
  startedAt: number;
  authEnabled: boolean;
}

/** Health and cluster routes (contract §5). */
export const serviceRoutes: FastifyPluginAsync<ServiceRouteOptions> = async (app, options) => {
  const { supervisor, gpuCount, version, startedAt, authEnabled } = options;
  const workerAddress = 'local';

  app.get('/status', { schema: { tags: ['service'] } }, async () => ({
    uptime: Math.floor((Date.now() - startedAt) / 1000),
    workers: {
      [workerAddress]: {
        update_time: Date.now() / 1000,
        failure_remaining_count: 5,
        status: { cpu: cpuStatus() },
      },
    },
  }));

  app.get('/v1/cluster/auth', { schema: { tags: ['service'] } }, async () => ({ auth: authEnabled }));

  app.get('/v1/cluster/devices', { ...needs('models:list'), schema: { tags: ['service'] } }, async () => gpuCount);

  app.get('/v1/cluster/version', { ...needs('admin'), schema: { tags: ['service'] } }, async () => ({
    version,
    'full-revisionid': null,
    dirty: false,
    error: null,
    date: null,
  }));

  app.get('/v1/cluster/info', { ...needs('admin'), schema: { tags: ['service'] } }, async () => [
    { node_type: 'Supervisor', ip_address: workerAddress, gpu_count: 0, gpu_vram_total: 0 },
    { node_type: 'Worker', ip_address: workerAddress, gpu_count: gpuCount, gpu_vram_total: 0 },
  ]);

  app.get('/v1/workers', { ...needs('admin'), schema: { tags: ['service'] } }, async () => [
    {
      'work-ip': workerAddress,
      models: Object.fromEntries(
        supervisor.listReady().flatMap((i) => i.replicas.map((r) => [r.uid, i.describe()])),
      ),
    },
  ]);
};

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
