import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Supervisor } from '../../supervisor/supervisor.js';
import { needs } from '../auth/route-permission.js';
import { ServiceMetrics } from './service-metrics.js';
import { whenRequestDone } from '../request-done.js';

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
  // Each request counted once: by its answer, or by its client leaving first.
  const counted = new WeakSet<FastifyRequest>();
  const count = (request: FastifyRequest, status: number, seconds: number): void => {
    if (counted.has(request)) return;
    counted.add(request);
    // The route pattern, not the path: uids in paths would explode the label set. The
    // model only when it names an instance, for the same reason.
    const body = request.body as { model?: unknown } | undefined;
    const model = typeof body?.model === 'string' && supervisor.has(body.model) ? body.model : '';
    const route = request.routeOptions.url ?? 'unknown';
    metrics.answered(request.method, route, status, model, seconds, request.overheadMs);
  };
  // Callback style: an async hook costs a promise on every request.
  app.addHook('onResponse', (request, reply, done) => {
    count(request, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  // A client that left before its answer ended gets no onResponse (nor fastify's
  // onRequestAbort, which is for a body cut short): counted as nginx's 499
  // (docs/errors.md, `client_closed`), where the request counter missed it.
  app.addHook('onRequest', (request, reply, done) => {
    whenRequestDone(reply, () => {
      if (!reply.raw.writableFinished) count(request, 499, (performance.now() - request.arrivedAt) / 1000);
    });
    done();
  });

  app.get('/metrics', { ...needs('admin'), schema: { tags: ['service'] } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
