/** The finish reasons a model's series counts (vLLM's, plus `tool_calls` and `error`); anything else is `other`. */
export const FINISH_REASONS = ['stop', 'length', 'tool_calls', 'abort', 'error', 'other'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

// The Messages API's stop reasons and the Responses API's statuses, in OpenAI's words.
const SYNONYMS: Record<string, FinishReason> = {
  stop: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  completed: 'stop',
  length: 'length',
  max_tokens: 'length',
  incomplete: 'length',
  tool_calls: 'tool_calls',
  tool_use: 'tool_calls',
  function_call: 'tool_calls',
  abort: 'abort',
  cancelled: 'abort',
};

interface Answer {
  finish_reason?: unknown;
  stop_reason?: unknown;
  status?: unknown;
  object?: unknown;
  choices?: Array<{ finish_reason?: unknown }> | unknown;
}

/**
 * The finish reason a value carries, if any: a runtime's generation chunk or result
 * (`finish_reason`), an OpenAI answer (`choices[0].finish_reason`), a Messages answer
 * (`stop_reason`) or a Responses answer (`status`).
 */
export function finishReasonOf(value: unknown): FinishReason | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Answer;
  const choice = Array.isArray(v.choices) ? (v.choices[0] as { finish_reason?: unknown } | undefined) : undefined;
  const given = v.finish_reason ?? choice?.finish_reason ?? v.stop_reason ?? (v.object === 'response' ? v.status : undefined);
  if (typeof given !== 'string' || given === '') return null;
  return SYNONYMS[given] ?? 'other';
}
