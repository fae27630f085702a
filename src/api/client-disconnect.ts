import type { FastifyReply } from 'fastify';

/** Aborts when the client goes away before the answer is written, so the runtime can stop working for nobody. */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
