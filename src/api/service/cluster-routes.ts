import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HangarError } from '../../errors/hangar-error.js';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';

export interface ClusterRouteOptions {
  supervisor: Supervisor;
  version: string;
  startedAt: number;
  /** Starts the orderly shutdown a SIGTERM starts; absent where the app does not own its process (tests). */
  shutdown?: () => void;
}

const envQuery = z.object({ model_name: z.string().max(256).optional(), model_engine: z.string().max(64).optional(), worker_ip: z.string().max(256).optional() });
const envDeleteQuery = envQuery.extend({
  model_name: z.string({ error: 'model_name parameter is required' }).min(1).max(256),
  python_version: z.string().max(32).optional(),
});

/**
 * The rest of Xinference's service routes (docs/decisions.md, "Service routes"): the
 * supervisor's address and facts, shutting the service down, and virtual
 * environments, which Hangar does not make (one runtime environment serves every model).
 */
export const clusterRoutes: FastifyPluginAsync<ClusterRouteOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['service'];

  const address = (): string => {
    const where = app.server.address();
    if (where && typeof where === 'object') return `${where.family === 'IPv6' ? `[${where.address}]` : where.address}:${where.port}`;
    return String(where ?? '');
  };

  // A JSON string, as Xinference answers (fastify would send a bare string as text).
  app.get('/v1/address', { ...needs('admin'), schema: { tags } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(address())));

  app.get('/v1/supervisor', { ...needs('admin'), schema: { tags } }, async () => ({
    // Xinference's one field, which its client's get_supervisor_info() reads.
    supervisor_ip: address(),
    address: address(),
    version: options.version,
    uptime: Math.floor((Date.now() - options.startedAt) / 1000),
    mode: (await options.supervisor.clusterWorkers()) ? 'ray' : 'local',
    models: options.supervisor.listInstances({}).length,
  }));

  app.delete('/v1/clusters', { ...needs('admin'), schema: { tags } }, async (request, reply) => {
    if (!options.shutdown) throw new HangarError('invalid_field', ['this server was not started by `hangar start` and cannot be shut down through the API'], { param: null });
    request.log.warn({ by: request.principal?.username ?? '(auth off)' }, 'shutdown requested through DELETE /v1/clusters');
    // Answered first: the drain waits for requests in flight, this one included.
    reply.raw.once('finish', options.shutdown);
    return { result: true };
  });

  app.get('/v1/virtualenvs', { ...needs('models:list'), schema: { querystring: envQuery, tags } }, async () => ({ list: [] }));

  app.delete('/v1/virtualenvs', { ...needs('admin'), schema: { querystring: envDeleteQuery, tags } }, async () => ({ result: true }));
};
