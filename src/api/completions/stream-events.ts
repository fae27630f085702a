import { randomUUID } from 'node:crypto';
import { stopReasonOf, type Generation, type TokenLogprob } from '../llm/generate-config.js';
import type { ChoiceSpec, StreamFormat } from '../llm/stream-format.js';
import { sseEvent } from '../sse/sse-response.js';
import { TextOffsets } from './text-offsets.js';

/**
 * A completion stream as OpenAI `text_completion` events; the last carries
 * `finish_reason`, followed (with `stream_options.include_usage`) by a usage chunk.
 * The envelope is built once per stream: this runs for every token relayed.
 */
export function completionStreamFormat(model: string, includeUsage: boolean, choice?: ChoiceSpec): StreamFormat {
  const id = choice?.id ?? `cmpl-${randomUUID()}`;
  const envelope = `{"id":"${id}","object":"text_completion","created":${choice?.created ?? Math.floor(Date.now() / 1000)},"model":${JSON.stringify(model)}`;
  const head = `${envelope},"choices":[{"index":${choice?.index ?? 0},"text":`;
  const ownUsage = includeUsage && (choice?.ownUsage ?? true);
  const usageEvent = (usage: unknown): string => sseEvent(`${envelope},"choices":[],"usage":${JSON.stringify(usage)}}`);
  const tail = includeUsage ? '}],"usage":null}' : '}]}';
  const offsets = new LogprobOffsets();
  let finished = false;
  // `stop` (vLLM's stop_reason) only on the finishing event: the per-token events stay as they were.
  const event = (g: Generation | null, stop = ''): string => {
    const text = g?.text ?? '';
    const finish = g?.finish_reason ?? null;
    const logprobs = g?.logprobs?.length ? JSON.stringify(offsets.completionLogprobs(g.logprobs)) : 'null';
    return sseEvent(`${head}${JSON.stringify(text)},"logprobs":${logprobs},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}${stop}${tail}`);
  };
  const finishing = (g: Generation | null): string => {
    finished = true;
    const events = event({ text: g?.text ?? '', finish_reason: g?.finish_reason ?? 'stop', logprobs: g?.logprobs ?? null }, `,"stop_reason":${JSON.stringify(stopReasonOf(g))}`);
    return ownUsage ? events + usageEvent(g?.usage ?? null) : events;
  };
  return {
    opening: () => '',
    events(g) {
      if (finished) return '';
      if (g.finish_reason) return finishing(g);
      return g.text || g.logprobs?.length ? event(g) : '';
    },
    closing: () => (finished ? '' : finishing(null)),
    usageEvent,
  };
}

/**
 * OpenAI's legacy completions logprobs (`tokens`, `token_logprobs`, `top_logprobs`
 * as maps, `text_offset`), from the runtime's per-token entries; offsets count on
 * across the events of one stream.
 */
class LogprobOffsets {
  private readonly offsets = new TextOffsets();

  completionLogprobs(entries: readonly TokenLogprob[]): Record<string, unknown> {
    const textOffset = entries.map((e) => this.offsets.next(e.token, e.bytes));
    return {
      tokens: entries.map((e) => e.token),
      token_logprobs: entries.map((e) => e.logprob),
      // The first echoed prompt token has no alternatives: null, as OpenAI answers. The
      // chosen token is always among them, as OpenAI's legacy API says ("up to
      // logprobs+1 elements") and vLLM answers: a sampled token outside the top N was left out.
      top_logprobs: entries.map((e) => (e.top_logprobs === null ? null : withChosen(e))),
      text_offset: textOffset,
    };
  }
}

function withChosen(entry: TokenLogprob): Record<string, number | null> {
  const map: Record<string, number | null> = Object.fromEntries((entry.top_logprobs ?? []).map((t) => [t.token, t.logprob]));
  // Defined, not assigned: a token spelled `__proto__` would set the map's prototype.
  if (entry.logprob !== null && !Object.hasOwn(map, entry.token)) Object.defineProperty(map, entry.token, { value: entry.logprob, enumerable: true, writable: true, configurable: true });
  return map;
}

/** A non-stream completion's logprobs (offsets from the start of its text). */
export function completionLogprobs(entries: readonly TokenLogprob[]): Record<string, unknown> {
  return new LogprobOffsets().completionLogprobs(entries);
}
