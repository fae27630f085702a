import type { IncomingMessage } from 'node:http';

/** What we read and discard of a body after answering early; beyond it the connection closes. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * An answer is going out before the request's body was read to its end (a body over
 * its route's limit, a multipart upload with too many fields). Left unread, the rest
 * of the body sits on a kept-alive connection and the client's next request behind it
 * waits until the connection times out; closing at once instead makes most clients
 * fail to read the answer (their write of the rest fails first). So the rest is read
 * and discarded, up to a bound; a body declared or found larger than that closes the
 * connection after the answer. Returns whether it will close.
 */
export function settleUnreadBody(raw: IncomingMessage): boolean {
  if (raw.complete || raw.destroyed) return false;
  const declared = Number(raw.headers['content-length']);
  if (Number.isFinite(declared) && declared > DRAIN_LIMIT_BYTES) return true;
  let drained = 0;
  raw.removeAllListeners('data');
  raw.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) raw.socket?.destroy();
  });
  raw.on('error', () => undefined);
  raw.resume();
  return false;
}
