import { HangarError } from '../../errors/hangar-error.js';

interface CallItem {
  type: string;
  call_id?: unknown;
}

/**
 * OpenAI's rule for function calls in a Responses input, with its wording: every
 * `function_call` has a `function_call_output` of its `call_id` after it, and every
 * output answers a call before it. An agent loop that lost an output, or mistyped a
 * `call_id`, reached the chat template as a call with no answer or an answer with no
 * call, which the model was never trained on; OpenAI refuses both, and so does this
 * (as Anthropic's rule is kept on /v1/messages, anthropic/tool-pairing.ts).
 * `itemPath` names an item as the client sent it (`input.3`, or `previous_response_id`).
 */
export function checkCallPairing(items: readonly CallItem[], itemPath: (index: number) => string): void {
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  items.forEach((item, i) => {
    if (typeof item.call_id !== 'string') return;
    if (item.type === 'function_call') calls.set(item.call_id, i);
    else if (item.type === 'function_call_output') {
      if (!calls.has(item.call_id)) {
        const param = itemPath(i);
        throw new HangarError('invalid_field', [`${param}: No tool call found for function call output with call_id ${item.call_id}.`], { param });
      }
      answered.add(item.call_id);
    }
  });
  for (const [id, i] of calls) {
    if (answered.has(id)) continue;
    const param = itemPath(i);
    throw new HangarError('invalid_field', [`${param}: No tool output found for function call ${id}.`], { param });
  }
}
