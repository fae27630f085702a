import type { FastifyInstance } from 'fastify';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { ServiceMetrics } from './service-metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counters the routes feed (tokens, time to first token); see service-metrics.ts. */
    metrics: ServiceMetrics;
  }
}

/**
 * GET /metrics in Prometheus' text format. Needs `admin` when auth is on (contract §5,
 * ours). Installed on the root instance (not as an encapsulated plugin) so its hook
 * sees every route.
 */
export function installMetrics(app: FastifyInstance, supervisor: Supervisor): void {
  const metrics = new ServiceMetrics(supervisor);
  app.decorate('metrics', metrics);
  // Callback style: an async hook costs a promise on every request.
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the path: uids in paths would explode the label set. The
    // model only when it names an instance, for the same reason.
    const body = request.body as { model?: unknown } | undefined;
    const model = typeof body?.model === 'string' && supervisor.has(body.model) ? body.model : '';
    const route = request.routeOptions.url ?? 'unknown';
    metrics.answered(request.method, route, reply.statusCode, model, reply.elapsedTime / 1000, request.overheadMs);
    done();
  });

  app.get('/metrics', { ...needs('admin'), schema: { tags: ['service'] } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
