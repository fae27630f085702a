import { randomUUID } from 'node:crypto';
import { asGeneration, type Generation } from '../llm/generate-config.js';

/**
 * Anthropic's `stop_reason` and `stop_sequence` for the runtime's last answer: a stop
 * string ends the turn as `stop_sequence` only when it is one of the request's own
 * `stop_sequences` (a model's end string, such as its template's, is `end_turn`).
 */
export function stopOf(g: Generation | null, stopSequences: readonly string[]): { stop_reason: string; stop_sequence: string | null } {
  const finish = g?.finish_reason;
  if (finish === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (finish === 'tool_calls') return { stop_reason: 'tool_use', stop_sequence: null };
  const matched = g?.stop_sequence;
  if (finish === 'stop' && typeof matched === 'string' && stopSequences.includes(matched)) return { stop_reason: 'stop_sequence', stop_sequence: matched };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

export function messageId(): string {
  return `msg_${randomUUID().replace(/-/g, '')}`;
}

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** An OpenAI tool call as an Anthropic `tool_use` block (arguments parsed; text that is not JSON kept as `{_raw}`). */
export function toolUseBlock(call: unknown): Record<string, unknown> {
  const c = call as ToolCall;
  let input: unknown = {};
  try {
    input = JSON.parse(c.function?.arguments ?? '{}');
  } catch {
    input = { _raw: c.function?.arguments ?? '' };
  }
  return { type: 'tool_use', id: c.id ?? `toolu_${randomUUID().replace(/-/g, '')}`, name: c.function?.name ?? '', input };
}

/** The non-stream answer: a `message` with thinking, text and tool_use blocks. */
export function anthropicMessage(model: string, value: unknown, stopSequences: readonly string[] = []): Record<string, unknown> {
  const g: Generation = asGeneration(value);
  const content: Array<Record<string, unknown>> = [];
  if (g.reasoning_content) content.push({ type: 'thinking', thinking: g.reasoning_content, signature: '' });
  if (g.text) content.push({ type: 'text', text: g.text });
  for (const call of g.tool_calls ?? []) content.push(toolUseBlock(call));
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model,
    content,
    ...stopOf(g, stopSequences),
    usage: { input_tokens: g.usage?.prompt_tokens ?? 0, output_tokens: g.usage?.completion_tokens ?? 0 },
  };
}
