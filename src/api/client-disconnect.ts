import type { FastifyReply } from 'fastify';

/** Aborts when the client goes away before the answer is written, so the runtime can stop working for nobody. */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  // An inference request's own controller (request-tracking.ts), so the abort route reaches the call too.
  const controller = reply.request.tracking?.controller ?? new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
