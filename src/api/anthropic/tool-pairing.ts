import { HangarError } from '../../errors/hangar-error.js';
import type { MessagesBody } from './schema.js';

/**
 * Anthropic's own rule for tool turns, with its wording: every `tool_use` of an
 * assistant message is answered by a `tool_result` in the very next (user) message,
 * and every `tool_result` answers a `tool_use` of the message just before. A
 * conversation that breaks it reached the chat template as a tool message with no call,
 * or a call with no answer, which most templates render as something the model was
 * never trained on; Anthropic's API refuses it, and so does this. An assistant message
 * that ends the conversation (a prefill) is left to the model, not checked.
 */
export function checkToolPairing(messages: MessagesBody['messages']): void {
  const usesOf = (i: number): string[] => {
    const message = messages[i];
    if (!message || message.role !== 'assistant' || typeof message.content === 'string') return [];
    return message.content.flatMap((b) => (b.type === 'tool_use' ? [(b as { id: string }).id] : []));
  };
  messages.forEach((message, i) => {
    const results = typeof message.content === 'string' ? [] : message.content.flatMap((b, k) => (b.type === 'tool_result' ? [{ id: (b as { tool_use_id: string }).tool_use_id, k }] : []));
    const previous = new Set(usesOf(i - 1));
    const stray = results.find((r) => !previous.has(r.id));
    if (stray) {
      const param = `messages.${i}.content.${stray.k}`;
      throw new HangarError('invalid_field', [`${param}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`], { param });
    }
    if (i + 1 >= messages.length) return;
    const answered = new Set(messages[i + 1]!.role === 'user' && typeof messages[i + 1]!.content !== 'string'
      ? (messages[i + 1]!.content as Array<{ type: string; tool_use_id?: string }>).flatMap((b) => (b.type === 'tool_result' && b.tool_use_id ? [b.tool_use_id] : []))
      : []);
    const unanswered = usesOf(i).filter((id) => !answered.has(id));
    if (unanswered.length > 0) {
      const param = `messages.${i + 1}`;
      throw new HangarError('invalid_field', [`${param}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`], { param });
    }
  });
}
