import type { FastifyReply } from 'fastify';
import type { Socket } from 'node:net';

/**
 * Calls `done` once, when a request is over: its answer written or abandoned (the
 * response's 'close'), or its connection closed. Watching the response alone missed
 * pipelined requests: an answer queued behind another on its connection never says
 * 'close' when the client leaves, so a model's lease, a key's slot, a drain's count and
 * the body budget's bytes stayed taken for good; the socket always says it.
 */
export function whenRequestDone(reply: FastifyReply, done: () => void): void {
  const response = reply.raw;
  const socket = reply.request.raw.socket as Socket | null;
  if (response.destroyed || !socket || socket.destroyed) {
    done();
    return;
  }
  let called = false;
  const once = (): void => {
    if (called) return;
    called = true;
    response.off('close', once);
    socket.off('close', once);
    done();
  };
  response.once('close', once);
  // Several requests in flight on one kept-alive connection each watch it: a count, not a leak.
  const max = socket.getMaxListeners();
  if (max !== 0 && socket.listenerCount('close') >= max - 1) socket.setMaxListeners(socket.listenerCount('close') + 10);
  socket.once('close', once);
}
