/** The usage an engine reports for one choice (its prompt's tokens and its own). */
export interface ChoiceUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/**
 * The usage of a request's choices, n per prompt in order: each prompt's tokens counted
 * once (its first choice's count; every choice of a prompt read the same prompt), every
 * choice's completion counted. One prompt with n = 1 is that choice's own usage.
 */
export function sumUsage(usages: ReadonlyArray<ChoiceUsage | null>, choicesPerPrompt: number): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  let prompt = 0;
  let completion = 0;
  usages.forEach((u, i) => {
    if (i % choicesPerPrompt === 0) prompt += u?.prompt_tokens ?? 0;
    completion += u?.completion_tokens ?? 0;
  });
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
