import type { FastifyReply, FastifyRequest } from 'fastify';
import { whenRequestDone } from './request-done.js';

/** Requests whose client went away before their answer was written (see closedByClient). */
const closed = new WeakSet<FastifyRequest>();

/** Aborts when the client goes away before the answer is written, so the runtime can stop working for nobody. */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  // An inference request's own controller (request-tracking.ts), so the abort route reaches the call too.
  const controller = reply.request.tracking?.controller ?? new AbortController();
  whenRequestDone(reply, () => {
    if (reply.raw.writableFinished) return;
    closed.add(reply.request);
    controller.abort();
  });
  return controller.signal;
}

/**
 * Whether the request's call was stopped because its client closed the connection: the
 * call's failure is then nobody's error (error-handler.ts answers 499 `client_closed`,
 * which no one reads, instead of logging a 503 that did not happen).
 */
export function closedByClient(request: FastifyRequest): boolean {
  return closed.has(request);
}
