import type { FastifyInstance } from 'fastify';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { needs } from '../auth/route-permission.js';

/**
 * GET /metrics in Prometheus' text format: process metrics and a request counter per
 * route. Needs `admin` when auth is on (contract §5, ours). Installed on the root
 * instance (not as an encapsulated plugin) so its hook sees every route.
 */
export function installMetrics(app: FastifyInstance): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'hangar_' });
  const requests = new Counter({
    name: 'hangar_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the path: uids in paths would explode the label set.
    requests.inc({ method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) });
  });

  app.get('/metrics', { ...needs('admin'), schema: { tags: ['service'] } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
