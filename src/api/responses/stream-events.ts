import type { HangarError } from '../../errors/hangar-error.js';
import type { Generation, TokenLogprob } from '../llm/generate-config.js';
import type { StreamFormat } from '../llm/stream-format.js';
import { itemId } from './input-items.js';
import { type ResponseContext, failedResponse, functionCallItem, messageItem, outputTextPart, reasoningItem, responseShell, responseUsage, statusOf } from './response-object.js';

type Open = { kind: 'reasoning' | 'message'; id: string; index: number; text: string; logprobs: TokenLogprob[] };

/**
 * A Responses stream in OpenAI's typed events (docs/responses.md, "Streaming"), each
 * with a `sequence_number`: `response.created`, `response.in_progress`; per output
 * item `response.output_item.added`, `response.content_part.added`, the deltas
 * (`response.output_text.delta`, `response.reasoning_text.delta`,
 * `response.function_call_arguments.delta`), their `.done` events and
 * `response.output_item.done`; then `response.completed` or `response.incomplete`
 * (or `response.failed`). No `[DONE]`. `onEnd` gets the final Response (to store it).
 */
export function responsesStreamFormat(ctx: ResponseContext, onEnd: (response: Record<string, unknown>) => void): StreamFormat {
  let sequence = 0;
  const output: Array<Record<string, unknown>> = [];
  let open: Open | null = null;
  let finished = false;
  let text = '';

  const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;

  const part = (o: Open): Record<string, unknown> =>
    o.kind === 'message' ? outputTextPart(o.text, ctx.logprobs ? o.logprobs : null) : { type: 'reasoning_text', text: o.text };
  const item = (o: Open, status: string): Record<string, unknown> =>
    o.kind === 'message' ? messageItem(o.id, status, [part(o)]) : reasoningItem(o.id, o.text);

  const begin = (kind: Open['kind']): string => {
    if (open?.kind === kind) return '';
    let out = close('completed');
    open = { kind, id: itemId(kind === 'message' ? 'msg' : 'rs'), index: output.length, text: '', logprobs: [] };
    output.push({});
    const added = kind === 'message' ? messageItem(open.id, 'in_progress', []) : { id: open.id, type: 'reasoning', summary: [], content: [] };
    out += event('response.output_item.added', { output_index: open.index, item: added });
    const emptyPart = kind === 'message' ? outputTextPart('', ctx.logprobs ? [] : null) : { type: 'reasoning_text', text: '' };
    return out + event('response.content_part.added', { item_id: open.id, output_index: open.index, content_index: 0, part: emptyPart });
  };

  const close = (status: string): string => {
    const o = open;
    if (!o) return '';
    open = null;
    const done = o.kind === 'message' ? 'response.output_text.done' : 'response.reasoning_text.done';
    const where = { item_id: o.id, output_index: o.index, content_index: 0 };
    let out = event(done, { ...where, text: o.text, ...(o.kind === 'message' ? { logprobs: ctx.logprobs ? o.logprobs : [] } : {}) });
    out += event('response.content_part.done', { ...where, part: part(o) });
    output[o.index] = item(o, status);
    return out + event('response.output_item.done', { output_index: o.index, item: output[o.index] });
  };

  const delta = (kind: Open['kind'], chunk: string, logprobs: TokenLogprob[] | null | undefined): string => {
    let out = begin(kind);
    const o = open!;
    o.text += chunk;
    if (kind === 'message') text += chunk;
    if (logprobs?.length) o.logprobs.push(...logprobs);
    const type = kind === 'message' ? 'response.output_text.delta' : 'response.reasoning_text.delta';
    out += event(type, { item_id: o.id, output_index: o.index, content_index: 0, delta: chunk, ...(kind === 'message' ? { logprobs: ctx.logprobs ? (logprobs ?? []) : [] } : {}) });
    return out;
  };

  const finish = (g: Generation | null): string => {
    finished = true;
    const { status, incomplete_details } = statusOf(g?.finish_reason);
    // A message is always answered, even empty, unless the answer is only tool calls.
    let out = !open && output.length === 0 && !g?.tool_calls?.length ? begin('message') : '';
    out += close(status === 'incomplete' ? 'incomplete' : 'completed');
    for (const call of g?.tool_calls ?? []) {
      // Cut by max_output_tokens, a call's arguments are cut too: not one to run (OpenAI's `incomplete`).
      const done = functionCallItem(call, status === 'incomplete' ? 'incomplete' : 'completed');
      const index = output.length;
      output.push(done);
      out += event('response.output_item.added', { output_index: index, item: { ...done, arguments: '', status: 'in_progress' } });
      out += event('response.function_call_arguments.delta', { item_id: done.id, output_index: index, delta: done.arguments });
      out += event('response.function_call_arguments.done', { item_id: done.id, output_index: index, name: done.name, arguments: done.arguments });
      out += event('response.output_item.done', { output_index: index, item: done });
    }
    const response = { ...responseShell(ctx, status), incomplete_details, output, output_text: text, usage: responseUsage(g) };
    onEnd(response);
    return out + event(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  };

  return {
    opening: () => {
      const shell = responseShell(ctx, 'in_progress');
      return event('response.created', { response: shell }) + event('response.in_progress', { response: shell });
    },
    events(g) {
      if (finished) return '';
      let out = '';
      if (g.reasoning_content) out += delta('reasoning', g.reasoning_content, null);
      if (g.text || (g.logprobs?.length && open?.kind === 'message')) out += delta('message', g.text, g.logprobs);
      if (g.finish_reason) out += finish(g);
      return out;
    },
    closing: () => (finished ? '' : finish(null)),
    done: '',
    failure: (error: HangarError) => {
      finished = true;
      const out = close('incomplete');
      return out + event('response.failed', { response: failedResponse(ctx, output, error) });
    },
  };
}
