import type { FastifyInstance } from 'fastify';
import { HangarError } from '../errors/hangar-error.js';
import { describeLimit } from './body-limits.js';

/** The largest body a multipart upload route may bring (its files' limits and its fields: multipart/form.ts). */
const MULTIPART_RESERVE_BYTES = 64 * 1024 * 1024;

/**
 * A budget on the request bodies held at once (config/body-budget-setting.ts). A request
 * with a body reserves its declared length (a body sent without one, or compressed, its
 * route's whole limit) before a byte of it is read, and gives it back when its answer is done or its
 * client gone; one that would take the total past the budget is answered 503
 * `server_busy` with `Retry-After` at once, its body never read. A request alone is
 * always let in: a body within its route's limit is never refused for its size alone.
 */
export function installBodyBudget(app: FastifyInstance, budgetBytes: number): void {
  if (budgetBytes <= 0) return;
  let held = 0;
  app.addHook('onRequest', async (request, reply) => {
    const raw = request.raw;
    const declared = raw.headers['content-length'];
    const chunked = raw.headers['transfer-encoding'] !== undefined;
    if (declared === undefined && !chunked) return; // no body
    const limit = request.isMultipart() ? MULTIPART_RESERVE_BYTES : (request.routeOptions.bodyLimit ?? MULTIPART_RESERVE_BYTES);
    // A compressed body's declared length is not what it holds once inflated (up to the limit).
    const encoding = raw.headers['content-encoding'];
    const compressed = encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
    const length = declared === undefined || compressed ? limit : Math.min(Number(declared) || 0, limit);
    if (length === 0) return;
    if (held > 0 && held + length > budgetBytes) {
      throw new HangarError('server_busy', [describeLimit(held), describeLimit(budgetBytes)], { headers: { 'retry-after': '1' } });
    }
    held += length;
    let released = false;
    reply.raw.once('close', () => {
      if (!released) held -= length;
      released = true;
    });
  });
}
