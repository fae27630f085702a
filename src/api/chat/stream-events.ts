import { randomUUID } from 'node:crypto';
import { stopReasonOf, type Generation } from '../llm/generate-config.js';
import type { ChoiceSpec, StreamFormat } from '../llm/stream-format.js';
import { sseEvent } from '../sse/sse-response.js';

/**
 * A chat stream as OpenAI `chat.completion.chunk` events: a first chunk with the
 * role, content deltas, a last chunk with `finish_reason` (and tool calls), then, with
 * `stream_options.include_usage`, a chunk with empty `choices` and the usage.
 *
 * Every event of a stream shares its envelope, so the JSON around the delta is built
 * once per stream: this runs for every token relayed.
 */
export function chatStreamFormat(model: string, includeUsage: boolean, choice?: ChoiceSpec): StreamFormat {
  const id = choice?.id ?? `chatcmpl-${randomUUID()}`;
  const envelope = `{"id":"${id}","created":${choice?.created ?? Math.floor(Date.now() / 1000)},"model":${JSON.stringify(model)},"object":"chat.completion.chunk"`;
  const head = `${envelope},"choices":[{"index":${choice?.index ?? 0},"delta":`;
  const ownUsage = includeUsage && (choice?.ownUsage ?? true);
  const tail = includeUsage ? '}],"usage":null}' : '}]}';
  // `stop` (vLLM's stop_reason) only on the finishing chunk: the per-token events stay as they were.
  const event = (delta: string, finish: string | null, logprobs: string, stop = ''): string =>
    sseEvent(`${head}${delta},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}${stop},"logprobs":${logprobs}${tail}`);
  let finished = false;
  const finish = (g: Generation | null, content: Record<string, unknown>): string => {
    finished = true;
    const toolCalls = g?.tool_calls?.map((call, index) => ({ index, ...(call as object) }));
    const delta = toolCalls?.length ? { ...content, tool_calls: toolCalls } : content;
    let events = event(JSON.stringify(delta), g?.finish_reason ?? 'stop', logprobsOf(g), `,"stop_reason":${JSON.stringify(stopReasonOf(g))}`);
    if (ownUsage) events += usageEvent(g?.usage ?? null);
    return events;
  };
  const usageEvent = (usage: unknown): string => sseEvent(`${envelope},"choices":[],"usage":${JSON.stringify(usage)}}`);
  return {
    opening: () => event('{"role":"assistant","content":""}', null, 'null'),
    events(g) {
      if (finished) return '';
      const content = deltaOf(g);
      if (g.finish_reason) return finish(g, content ?? {});
      return content ? event(JSON.stringify(content), null, logprobsOf(g)) : '';
    },
    closing: () => (finished ? '' : finish(null, {})),
    usageEvent,
  };
}

function deltaOf(g: Generation): Record<string, unknown> | null {
  if (!g.text && !g.reasoning_content) return g.logprobs?.length ? { content: '' } : null;
  const delta: Record<string, unknown> = {};
  if (g.text) delta.content = g.text;
  if (g.reasoning_content) delta.reasoning_content = g.reasoning_content;
  return delta;
}

function logprobsOf(g: Generation | null): string {
  return g?.logprobs?.length ? JSON.stringify({ content: g.logprobs }) : 'null';
}
