import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

// A caller's own id is kept (so logs on both sides line up) when it looks like an id, not a payload.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function genRequestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && ACCEPTABLE_ID.test(given) ? given : randomUUID();
}

/** Every response carries `x-request-id` (contract §1). */
export function installRequestId(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
