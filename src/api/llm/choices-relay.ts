import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HangarError } from '../../errors/hangar-error.js';
import { SSE_DONE, SseResponse } from '../sse/sse-response.js';
import { asGeneration } from './generate-config.js';
import type { StreamFormat } from './stream-format.js';
import { failureEvent, type ChunkSource } from './stream-relay.js';

/**
 * OpenAI's `n` > 1 on a stream (docs/openai-parameters.md): n generations relayed as
 * one SSE stream, each event carrying its choice's `index`, every chunk written as it
 * comes (no merging: n > 1 streams are rare, and stream-relay.ts keeps the one-choice
 * path lean). Usage, when asked, is one chunk for all choices at the end, the prompt
 * counted once.
 */
export async function relayChoices(
  request: FastifyRequest,
  reply: FastifyReply,
  sources: readonly ChunkSource[],
  formats: readonly StreamFormat[],
  options: { includeUsage: boolean; observe: (values: readonly unknown[]) => void; aborted: () => HangarError | null; beforeHeaders: () => void },
): Promise<void> {
  // The first chunk of every choice before the headers: a failure there is a plain HTTP error.
  let firsts: unknown[][];
  try {
    firsts = await Promise.all(sources.map((s) => s.nextBatch()));
  } catch (err) {
    await Promise.all(sources.map((s) => s.return()));
    throw err;
  }
  options.beforeHeaders();
  const out = new SseResponse(request, reply);
  out.onClientGone(() => void Promise.all(sources.map((s) => s.return())));
  const usages: Array<{ prompt_tokens?: number; completion_tokens?: number } | null> = sources.map(() => null);
  out.write(formats.map((f) => f.opening()).join(''));
  try {
    await Promise.all(
      sources.map(async (source, i) => {
        let batch = firsts[i]!;
        while (batch.length > 0 && !out.clientGone) {
          options.observe(batch);
          let events = '';
          for (const value of batch) {
            const g = asGeneration(value);
            if (g.usage) usages[i] = g.usage;
            events += formats[i]!.events(g);
          }
          out.write(events);
          if (source.ended) break;
          batch = await source.nextBatch();
        }
        out.write(formats[i]!.closing());
      }),
    );
    const aborted = options.aborted();
    if (aborted) throw aborted;
    let tail = '';
    if (options.includeUsage && formats[0]?.usageEvent) {
      const prompt = usages[0]?.prompt_tokens ?? 0;
      const completion = usages.reduce((sum, u) => sum + (u?.completion_tokens ?? 0), 0);
      tail += formats[0].usageEvent({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    }
    out.end(tail + SSE_DONE);
  } catch (err) {
    out.end(failureEvent(request, err));
  } finally {
    await Promise.all(sources.map((s) => s.return()));
  }
}
