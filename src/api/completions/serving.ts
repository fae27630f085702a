import { randomUUID } from 'node:crypto';
import { HangarError } from '../../errors/hangar-error.js';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import { asGeneration, stopReasonOf, toGenerateConfig, withLogprobs } from '../llm/generate-config.js';
import { checkLoraName } from '../llm/lora-model-id.js';
import { COMPLETION_RULES, checkParameters } from '../llm/parameter-support.js';
import { completionLogprobs } from './stream-events.js';
import { MAX_CHOICES, type CompletionBody } from './schema.js';

/**
 * The call(s) of a completions request: `args` for its first prompt and, when it lists
 * several, `batch` with the args of each (serve-generation.ts makes n calls per prompt).
 */
export function prepareCompletion(supervisor: Supervisor, body: CompletionBody): { target: CallTarget; args: unknown[]; batch?: unknown[][]; kwargs: Record<string, unknown> } {
  // The body's own limits first, as for a schema refusal: before the model is looked up.
  const prompts = promptsOf(body.prompt);
  const n = body.n ?? 1;
  if (prompts.length * n > MAX_CHOICES) {
    throw new HangarError('invalid_field', [`n: ${prompts.length} prompts × n ${n} would be ${prompts.length * n} choices; at most ${MAX_CHOICES} per request`], { param: 'n' });
  }
  const target: CallTarget = { uid: body.model, route: '/v1/completions', types: ['LLM'] };
  const instance = supervisor.require(body.model);
  checkParameters(body, COMPLETION_RULES, instance.resolved.engine, body.model);
  checkLoraName(instance, body.lora_name);
  if (instance.resolved.modelType === 'LLM' && instance.state === 'READY' && !instance.abilities.includes('generate')) {
    throw new HangarError('ability_missing', [body.model, 'text completion (`generate`)', instance.abilities.join(', ')], { param: 'model' });
  }
  const generateConfig = withLogprobs(toGenerateConfig(body, body.max_tokens), body.logprobs ?? null);
  if (body.echo) generateConfig.echo = true;
  const kwargs = { generate_config: generateConfig };
  return prompts.length === 1 ? { target, args: [prompts[0]], kwargs } : { target, args: [prompts[0]], batch: prompts.map((p) => [p]), kwargs };
}

/** The prompts of a request: one string or token-id list, or each of a list of them. */
export function promptsOf(prompt: CompletionBody['prompt']): Array<string | number[]> {
  if (typeof prompt === 'string') return [prompt];
  // A flat list of numbers is one prompt of token ids.
  if (prompt.every((p) => typeof p === 'number')) return [prompt as number[]];
  return prompt as Array<string | number[]>;
}

function envelope(model: string) {
  return { id: `cmpl-${randomUUID()}`, object: 'text_completion', created: Math.floor(Date.now() / 1000), model };
}

export function completion(model: string, value: unknown): Record<string, unknown> {
  const g = asGeneration(value);
  return {
    ...envelope(model),
    choices: [{ index: 0, text: g.text, logprobs: g.logprobs?.length ? completionLogprobs(g.logprobs) : null, finish_reason: g.finish_reason ?? 'stop', stop_reason: stopReasonOf(g) }],
    usage: g.usage ?? null,
  };
}
