import type { FastifyReply, FastifyRequest } from 'fastify';
import { HangarError, errorBody } from '../../errors/hangar-error.js';
import { SSE_DONE, SseResponse, sseEvent } from '../sse/sse-response.js';
import { logFailure } from '../error-handler.js';
import { asGeneration } from './generate-config.js';
import { HeldChunks } from './held-chunks.js';
import type { StreamFormat } from './stream-format.js';

/** A stream of runtime chunks read a step at a time (supervisor CallStream). */
export interface ChunkSource {
  /** Everything that arrived since the last read, waiting for something; `[]` at the end. */
  nextBatch(): Promise<unknown[]>;
  /** Whatever has arrived, without waiting. */
  takeQueued(): unknown[];
  /** The stream has ended and everything was read: the last write can carry `[DONE]`. */
  readonly ended: boolean;
  return(): Promise<unknown>;
}

export interface RelayOptions {
  /** At most one event per this many text-bearing chunks (tokens); 1: every chunk. */
  interval: number;
  /** Runs once the first chunk is in, just before the headers go out. */
  beforeHeaders: () => void;
  /** Sees every chunk read (metrics). */
  observe: (values: readonly unknown[]) => void;
  /** Once the source has ended: the error to end with instead of `[DONE]` (an abort through the API). */
  aborted?: () => HangarError | null;
  /** HANGAR_STREAM_STALL_TIMEOUT_MS: a client that takes nothing this long is closed (sse-response.ts). */
  stallMs: number;
}

/**
 * Relays a generation's chunks to the client as SSE (docs/performance.md, "Token
 * relay"), with OpenAI's framing: events, then `data: [DONE]`.
 *
 * - The first chunk is awaited before the headers go out, so a failure there is an
 *   ordinary HTTP error; a failure later is one `data: {"error": ...}` event.
 * - Nothing is held back while the client's socket takes what it is given: each chunk
 *   is its own event, and the events read in one turn go out in one write.
 * - While the client is still draining the last write, chunks queue in the source;
 *   when it has drained, everything queued goes out merged into one event (texts and
 *   log-probabilities concatenated, finish reason and usage kept).
 * - `interval` > 1 merges every `interval` tokens into one event on purpose.
 * - A client that goes away stops the source, which aborts the generation.
 */
export async function relayStream(request: FastifyRequest, reply: FastifyReply, source: ChunkSource, format: StreamFormat, options: RelayOptions): Promise<void> {
  let batch = await source.nextBatch();
  options.beforeHeaders();
  const out = new SseResponse(request, reply, options.stallMs);
  out.onClientGone(() => void source.return());
  const held = new HeldChunks(options.interval);
  let pending = format.opening(batch.length > 0 ? asGeneration(batch[0]) : undefined);
  let merge = false;
  try {
    while (batch.length > 0) {
      options.observe(batch);
      held.add(batch);
      if (source.ended) break; // the end came with this step: one write with [DONE]
      out.write(pending + held.events(format, merge));
      pending = '';
      merge = out.backpressured;
      if (merge) await out.drained();
      if (out.clientGone) return;
      batch = merge ? source.takeQueued() : [];
      if (batch.length === 0) batch = await source.nextBatch();
    }
    // Left by its client: nothing is closed for it (a Responses stream would store a cut answer as completed).
    if (out.clientGone) return;
    const aborted = options.aborted?.();
    if (aborted) throw aborted;
    out.end(pending + held.rest(format, merge) + format.closing() + (format.done ?? SSE_DONE));
  } catch (err) {
    out.end(pending + held.rest(format, true) + failureEvent(request, err, format));
  } finally {
    await source.return();
  }
}

/** A failure after the headers went out: one `data: {"error": ...}` event (contract §4); 5xx are logged. */
export function failureEvent(request: FastifyRequest, err: unknown, format?: StreamFormat): string {
  const error = err instanceof HangarError ? err : new HangarError('internal_error', [String(request.id)], { cause: err });
  request.meter?.fail();
  logFailure(request, error);
  if (format?.failure) return format.failure(error);
  return sseEvent(JSON.stringify({ error: errorBody(error).error }));
}
