import { HangarError } from '../../errors/hangar-error.js';

/** The two fields of vLLM's chat request that say where the prompt ends. */
export interface ChatEndingFields {
  add_generation_prompt?: boolean | null | undefined;
  continue_final_message?: boolean | null | undefined;
}

/**
 * Where a chat prompt ends, as vLLM's chat request says it (docs/openai-parameters.md):
 * by default the template opens the assistant's turn; `continue_final_message: true`
 * ends the prompt inside the last message, so the answer goes on with it (Anthropic's
 * prefill, a JSON answer's first brace); `add_generation_prompt: false` ends it after
 * the last message with no turn opened. The runtime's chat kwargs of the same names,
 * sent only when they change something (docs/runtime-protocol.md).
 */
export function chatEnding(body: ChatEndingFields): Record<string, boolean> {
  if (body.continue_final_message === true) {
    // vLLM's own refusal: the two ask for opposite ends.
    if (body.add_generation_prompt === true) {
      throw new HangarError('invalid_field', ['continue_final_message: cannot be true with add_generation_prompt true (the prompt either continues the last message or opens a new turn); set add_generation_prompt to false'], { param: 'continue_final_message' });
    }
    return { add_generation_prompt: false, continue_final_message: true };
  }
  return body.add_generation_prompt === false ? { add_generation_prompt: false } : {};
}
