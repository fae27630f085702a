import type { HangarError } from '../../errors/hangar-error.js';
import type { Generation } from '../llm/generate-config.js';
import type { StreamFormat } from '../llm/stream-format.js';
import { messageId, stopOf, toolUseBlock } from './message-response.js';
import { anthropicErrorType } from './error-shape.js';

const event = (name: string, data: Record<string, unknown>): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A Messages stream in Anthropic's event sequence: `message_start`, then per content
 * block `content_block_start`, its deltas (`thinking_delta`, `text_delta`,
 * `input_json_delta`) and `content_block_stop`, then `message_delta` (stop reason,
 * usage) and `message_stop`. No `[DONE]`: Anthropic's streams end with message_stop.
 */
export function anthropicStreamFormat(model: string, stopSequences: readonly string[] = []): StreamFormat {
  let index = -1;
  let open: 'thinking' | 'text' | null = null;
  let finished = false;

  const start = (kind: 'thinking' | 'text'): string => {
    let out = '';
    if (open === kind) return out;
    if (open !== null) out += event('content_block_stop', { type: 'content_block_stop', index });
    index++;
    open = kind;
    return out + event('content_block_start', { type: 'content_block_start', index, content_block: kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' } });
  };
  const close = (): string => {
    if (open === null) return '';
    open = null;
    return event('content_block_stop', { type: 'content_block_stop', index });
  };
  const finish = (g: Generation | null): string => {
    finished = true;
    let out = close();
    for (const call of g?.tool_calls ?? []) {
      const block = toolUseBlock(call);
      index++;
      out += event('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } });
      out += event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
      out += event('content_block_stop', { type: 'content_block_stop', index });
    }
    const usage = { input_tokens: g?.usage?.prompt_tokens ?? 0, output_tokens: g?.usage?.completion_tokens ?? 0 };
    out += event('message_delta', { type: 'message_delta', delta: stopOf(g, stopSequences), usage });
    return out + event('message_stop', { type: 'message_stop' });
  };

  return {
    // Anthropic sends the input tokens here; many clients that count from the events
    // read them only here, and only the output tokens from message_delta.
    opening: (first) =>
      event('message_start', {
        type: 'message_start',
        message: {
          id: messageId(),
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: first?.prompt_tokens ?? first?.usage?.prompt_tokens ?? 0, output_tokens: 0 },
        },
      }),
    events(g) {
      if (finished) return '';
      let out = '';
      if (g.reasoning_content) out += start('thinking') + event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: g.reasoning_content } });
      if (g.text) out += start('text') + event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: g.text } });
      if (g.finish_reason) out += finish(g);
      return out;
    },
    closing: () => (finished ? '' : finish(null)),
    done: '',
    failure: (error: HangarError) => close() + event('error', { type: 'error', error: { type: anthropicErrorType(error), message: error.message } }),
  };
}
