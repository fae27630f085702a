import { randomUUID } from 'node:crypto';
import { asGeneration, type Generation } from '../llm/generate-config.js';

/** Anthropic's stop reasons for the runtime's finish reasons. */
export function stopReason(finish: string | undefined): string {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls') return 'tool_use';
  return 'end_turn';
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
export function anthropicMessage(model: string, value: unknown): Record<string, unknown> {
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
    stop_reason: stopReason(g.finish_reason),
    stop_sequence: null,
    usage: { input_tokens: g.usage?.prompt_tokens ?? 0, output_tokens: g.usage?.completion_tokens ?? 0 },
  };
}
