import type { FastifyInstance } from 'fastify';
import { Transform, type Readable } from 'node:stream';
import { HangarError } from '../errors/hangar-error.js';
import { describeLimit } from './body-limits.js';
import { isMultipartBody } from './multipart/multipart-body.js';
import { whenRequestDone } from './request-done.js';

/**
 * A budget on the request bodies held at once (config/body-budget-setting.ts), counted
 * in the bytes that have arrived (inflated, for a compressed body), not in what a
 * header declares: a declared length cost an attacker nothing, and a few connections
 * declaring 50 MiB and sending a byte held the whole budget. A request holds its bytes
 * until its answer is done or its connection gone; the chunk that would take the total
 * past the budget ends its body with 503 `server_busy` and `Retry-After`. A request
 * alone is always let in. Multipart uploads are read by their own parser from the raw
 * request and are bounded per file instead (multipart/form.ts).
 */
export function installBodyBudget(app: FastifyInstance, budgetBytes: number): void {
  if (budgetBytes <= 0) return;
  let held = 0;
  app.addHook('preParsing', (request, reply, payload, done) => {
    // A stream of ours beside the multipart parser's own reading would fill and stop the
    // upload (every file over 32 KiB hung until the body timeout).
    if (isMultipartBody(request)) return done(null, payload);
    let mine = 0;
    let released = false;
    whenRequestDone(reply, () => {
      released = true;
      held -= mine;
    });
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (released) return callback(null, chunk);
        const others = held - mine;
        if (others > 0 && held + chunk.length > budgetBytes) {
          return callback(new HangarError('server_busy', [describeLimit(held), describeLimit(budgetBytes)], { headers: { 'retry-after': '1' } }));
        }
        held += chunk.length;
        mine += chunk.length;
        callback(null, chunk);
      },
    });
    // fastify checks Content-Length against the bytes on the wire (request-encoding.ts sets them for a compressed body).
    Object.defineProperty(counter, 'receivedEncodedLength', { get: () => (payload as Readable & { receivedEncodedLength?: number }).receivedEncodedLength });
    payload.on('error', (err) => counter.destroy(err));
    // A body answered before its end is no longer read: stop reading it into this stream.
    counter.on('error', () => payload.unpipe(counter));
    done(null, payload.pipe(counter));
  });
}
