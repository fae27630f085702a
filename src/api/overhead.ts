import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() when the request arrived. */
    arrivedAt: number;
    /** What setOverheadHeader reported, for the metrics; null on routes that report none. */
    overheadMs: number | null;
  }
}

/** Stamps each request on arrival, for `x-hangar-overhead-ms` (contract §1, ours). */
export function installOverheadClock(app: FastifyInstance): void {
  app.decorateRequest('arrivedAt', 0);
  app.decorateRequest('overheadMs', null);
  app.addHook('onRequest', async (request) => {
    request.arrivedAt = performance.now();
  });
}

/** Time spent in the control plane so far, excluding what the runtime took. */
export function setOverheadHeader(request: FastifyRequest, reply: FastifyReply, runtimeMs: number): void {
  const overhead = Math.max(0, performance.now() - request.arrivedAt - runtimeMs);
  reply.header('x-hangar-overhead-ms', overhead.toFixed(3));
  request.overheadMs = overhead;
}
