import { asGeneration, type Generation, type TokenLogprob } from './generate-config.js';

/**
 * Several stream chunks of one generation as one (the SSE relay's coalescing): texts
 * and reasoning concatenated in order, log-probability lists concatenated, and the
 * finish reason, usage and tool calls of the chunk that carried them (only the last
 * chunk of a stream does). The merged text is exactly the chunks' texts joined, so a
 * client that concatenates deltas reads the same answer however chunks were merged.
 */
export function mergeGenerations(values: readonly unknown[]): Generation {
  if (values.length === 1) return asGeneration(values[0]);
  let text = '';
  let reasoning = '';
  let logprobs: TokenLogprob[] | null = null;
  const merged: Generation = { text: '' };
  for (const value of values) {
    const g = asGeneration(value);
    text += g.text;
    if (g.reasoning_content) reasoning += g.reasoning_content;
    if (g.logprobs?.length) logprobs = logprobs ? logprobs.concat(g.logprobs) : g.logprobs.slice();
    if (g.finish_reason) merged.finish_reason = g.finish_reason;
    if (g.usage) merged.usage = g.usage;
    if (g.tool_calls?.length) merged.tool_calls = g.tool_calls;
    if (g.stop_sequence !== undefined) merged.stop_sequence = g.stop_sequence;
    if (g.stop_token_id !== undefined) merged.stop_token_id = g.stop_token_id;
  }
  merged.text = text;
  if (reasoning) merged.reasoning_content = reasoning;
  if (logprobs) merged.logprobs = logprobs;
  return merged;
}
