import { HangarError } from '../../errors/hangar-error.js';

/*
 * Counting a chat request's prompt without generating: Anthropic's count_tokens and the
 * Responses API's input_tokens, through the engines' count_tokens method.
 */

/**
 * A chat call's keyword arguments as count_tokens takes them: no generate_config, and
 * tool_choice only when it is "none" (the template is then not told about the tools);
 * a forced choice changes how the answer is held, not the prompt.
 */
export function countTokensKwargs(kwargs: Record<string, unknown>): Record<string, unknown> {
  const { generate_config: _config, tool_choice: choice, ...rest } = kwargs;
  return choice === 'none' ? { ...rest, tool_choice: choice } : rest;
}

export function promptTokens(value: unknown): number {
  const count = (value as { prompt_tokens?: unknown } | null)?.prompt_tokens;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
    throw new HangarError('inference_failed', [`the engine counted no prompt tokens (${JSON.stringify(value)?.slice(0, 200)})`]);
  }
  return count;
}
