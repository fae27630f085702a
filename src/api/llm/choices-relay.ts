import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HangarError } from '../../errors/hangar-error.js';
import { SSE_DONE, SseResponse } from '../sse/sse-response.js';
import { sumUsage, type ChoiceUsage } from './choice-usage.js';
import { HeldChunks } from './held-chunks.js';
import type { StreamFormat } from './stream-format.js';
import { failureEvent, type ChunkSource } from './stream-relay.js';

/**
 * OpenAI's `n` > 1 on a stream, or a completions request's list of prompts
 * (docs/openai-parameters.md): the generations relayed as one SSE stream, each event
 * carrying its choice's `index`. Each choice is relayed as
 * stream-relay.ts relays one: its chunks written as they come while the client keeps
 * up, merged into one event per choice while the client drains the last write (so a
 * slow reader costs the text, not an envelope per token times n), and spaced by the
 * stream interval when one is set. Usage, when asked, is one chunk for all choices at
 * the end, each prompt counted once.
 */
/** How long the headers wait for the other choices once one has its first chunk. */
const HEADERS_GRACE_MS = 250;

export async function relayChoices(
  request: FastifyRequest,
  reply: FastifyReply,
  sources: readonly ChunkSource[],
  formats: readonly StreamFormat[],
  options: {
    interval: number;
    includeUsage: boolean;
    /** Sources come n per prompt, in order: each prompt's tokens are counted once. */
    choicesPerPrompt: number;
    /** Sees each relayed batch, with the index of the choice it belongs to. */
    observe: (values: readonly unknown[], choice: number) => void;
    aborted: () => HangarError | null;
    beforeHeaders: () => void;
    stallMs: number;
  },
): Promise<void> {
  // The headers go once every choice has its first chunk, or HEADERS_GRACE_MS after the
  // first choice has: a failure before that (a prompt of a list past the context, which
  // the engine refuses at once) is a plain HTTP error, one after it an error event.
  // Waiting for every choice's first chunk without a bound held a stream of more choices
  // than the engine has slots silent until its last choice began (n = 16 on 8 slots: 7 s).
  const firsts = sources.map((s) => s.nextBatch());
  for (const first of firsts) first.catch(() => {}); // each is awaited below; a failure is not unhandled meanwhile
  const all = Promise.all(firsts);
  all.catch(() => {});
  try {
    // A choice that fails within the grace rejects `all` at once: the request's error, as before.
    await Promise.race([all, Promise.race(firsts).then(() => new Promise((resolve) => setTimeout(resolve, HEADERS_GRACE_MS).unref()))]);
  } catch (err) {
    await Promise.all(sources.map((s) => s.return()));
    throw err;
  }
  options.beforeHeaders();
  const out = new SseResponse(request, reply, options.stallMs);
  out.onClientGone(() => void Promise.all(sources.map((s) => s.return())));
  const usages: Array<ChoiceUsage | null> = sources.map(() => null);
  out.write(formats.map((f) => f.opening()).join(''));
  try {
    await Promise.all(
      sources.map(async (source, i) => {
        const format = formats[i]!;
        const held = new HeldChunks(options.interval);
        let batch = await firsts[i]!;
        let merge = false;
        while (batch.length > 0 && !out.clientGone) {
          options.observe(batch, i);
          for (const value of batch) {
            const usage = (value as { usage?: (typeof usages)[number] } | null)?.usage;
            if (usage) usages[i] = usage;
          }
          held.add(batch);
          if (source.ended) break;
          out.write(held.events(format, merge));
          merge = out.backpressured;
          if (merge) await out.drained();
          batch = merge ? source.takeQueued() : [];
          if (batch.length === 0 && !out.clientGone) batch = await source.nextBatch();
        }
        if (!out.clientGone) out.write(held.rest(format, merge) + format.closing());
      }),
    );
    const aborted = options.aborted();
    if (aborted) throw aborted;
    let tail = '';
    if (options.includeUsage && formats[0]?.usageEvent) tail += formats[0].usageEvent(sumUsage(usages, options.choicesPerPrompt));
    out.end(tail + SSE_DONE);
  } catch (err) {
    out.end(failureEvent(request, err));
  } finally {
    await Promise.all(sources.map((s) => s.return()));
  }
}
