import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { whenRequestDone } from '../request-done.js';

/**
 * A `text/event-stream` response written straight to the socket (docs/decisions.md,
 * "SSE writer"): the token relay needs to know when the client is still draining the
 * previous write, and to send several events in one write, which an event-at-a-time
 * SSE helper does not give it.
 *
 * The reply is hijacked, so Fastify's onSend hooks do not run: the headers they would
 * add (`x-request-id`) are set here. `Connection` is left to Node, which honours a
 * client's `Connection: close` by closing the socket after the last byte.
 */
export class SseResponse {
  private readonly raw: ServerResponse;
  private closedByClient = false;
  // One promise per drain, shared by every writer waiting on it (n > 1 has one per choice).
  private drain: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private stall: NodeJS.Timeout | null = null;
  private readonly goneListeners: (() => void)[] = [];

  /**
   * `stallMs`: how long the client may take nothing of what was written (a drain
   * awaited, or the last bytes after the end) before the connection is closed, which
   * stops the generation as any client leaving does. A client that stopped reading
   * held its batch slot and kept its model generating, every token buffered here.
   */
  constructor(request: FastifyRequest, reply: FastifyReply, private readonly stallMs: number) {
    this.raw = reply.raw;
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) this.raw.setHeader(name, value);
    }
    this.raw.setHeader('content-type', 'text/event-stream; charset=utf-8');
    this.raw.setHeader('cache-control', 'no-cache');
    this.raw.setHeader('x-accel-buffering', 'no'); // no buffering in an nginx in front
    this.raw.setHeader('x-request-id', request.id);
    this.raw.writeHead(200);
    // The connection's close too, not only the response's: a stream queued behind
    // another answer on a pipelined connection never says 'close' when the client
    // leaves, and it generated on, buffered here, until the stall timer.
    whenRequestDone(reply, () => {
      this.closedByClient = !this.raw.writableFinished;
      this.wakeDrain();
      if (this.stall) clearTimeout(this.stall);
      if (this.closedByClient) for (const listener of this.goneListeners.splice(0)) listener();
    });
    this.raw.on('drain', () => this.wakeDrain());
    // A write to a reset socket reports here; 'close' follows.
    this.raw.on('error', () => {});
  }

  /** The client went away before the stream ended. */
  get clientGone(): boolean {
    return this.closedByClient || this.raw.destroyed;
  }

  /** The client has not taken the last write yet: more events should be merged, not queued. */
  get backpressured(): boolean {
    return this.raw.writableNeedDrain;
  }

  onClientGone(listener: () => void): void {
    if (this.closedByClient) listener();
    else this.goneListeners.push(listener);
  }

  /** One socket write for any number of events already framed as `data: ...\n\n`. */
  write(events: string): void {
    if (events && !this.clientGone) this.raw.write(events);
  }

  /** Resolves when the client has taken what was written (or is gone). */
  drained(): Promise<void> {
    if (!this.backpressured || this.clientGone) return Promise.resolve();
    this.drain ??= new Promise((resolve) => {
      this.wake = resolve;
      this.watchStall();
    });
    return this.drain;
  }

  end(events = ''): void {
    if (this.clientGone) return;
    this.raw.end(events);
    // The last bytes too: a client that never takes them held the socket for good.
    if (!this.raw.writableFinished) {
      this.watchStall();
      this.raw.once('finish', () => this.stall && clearTimeout(this.stall));
    }
  }

  private watchStall(): void {
    if (this.stall) clearTimeout(this.stall);
    this.stall = setTimeout(() => {
      this.stall = null;
      if (!this.raw.writableFinished) this.raw.destroy();
    }, this.stallMs);
    this.stall.unref();
  }

  private wakeDrain(): void {
    if (this.stall) clearTimeout(this.stall);
    this.stall = null;
    const wake = this.wake;
    this.drain = null;
    this.wake = null;
    wake?.();
  }
}

/** One SSE event carrying a JSON value (OpenAI's streaming format: data lines only). */
export function sseEvent(json: string): string {
  return `data: ${json}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
