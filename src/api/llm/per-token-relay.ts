import type { FastifyReply, FastifyRequest } from 'fastify';
import { SSE_DONE, SseResponse } from '../sse/sse-response.js';
import { asGeneration } from './generate-config.js';
import type { StreamFormat } from './stream-format.js';
import { failureEvent, type ChunkSource, type RelayOptions } from './stream-relay.js';

/**
 * HANGAR_TOKEN_RELAY=per-token (config.ts, StreamingSettings): the relay as it was
 * before protocol v2, kept as the baseline of bench/llm-relay.ts. Every chunk is read
 * alone, written alone and its write awaited; nothing is merged, and the interval is
 * ignored. Not for serving: the batched relay (stream-relay.ts) does the same job
 * for a fraction of the CPU.
 */
export async function relayPerToken(request: FastifyRequest, reply: FastifyReply, source: ChunkSource, format: StreamFormat, options: RelayOptions): Promise<void> {
  let batch = await source.nextBatch();
  options.beforeHeaders();
  const out = new SseResponse(request, reply, options.stallMs);
  out.onClientGone(() => void source.return());
  try {
    out.write(format.opening(batch.length > 0 ? asGeneration(batch[0]) : undefined));
    while (batch.length > 0) {
      for (const value of batch) {
        options.observe([value]);
        out.write(format.events(asGeneration(value)));
        await out.drained();
        if (out.clientGone) return;
      }
      batch = await source.nextBatch();
    }
    if (out.clientGone) return;
    out.end(format.closing() + SSE_DONE);
  } catch (err) {
    out.end(failureEvent(request, err));
  } finally {
    await source.return();
  }
}
