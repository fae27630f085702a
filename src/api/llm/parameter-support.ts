import { HangarError } from '../../errors/hangar-error.js';

/**
 * Which engine honours which OpenAI request field (docs/openai-parameters.md). A field
 * set to something other than its no-op value is either honoured by the model's
 * engine or refused with 400 naming the field and the engine: never dropped.
 * Fields that change nothing by their definition (`user`, a `stream_options` without
 * usage) are not listed; the schemas accept them.
 */
interface Rule {
  /** True when the value asks for something (not the field's default or a no-op); `body` for fields that ask only beside another. */
  asks: (value: unknown, body: Record<string, unknown>) => boolean;
  /** Engines that do what it asks; an empty list: none yet. */
  engines: readonly string[];
  /** Said after the refusal: what to use instead, or why none does it. */
  hint?: string;
}

const ALL_GENERATORS = ['Transformers', 'vLLM', 'llama.cpp', 'simulator'];
const SAMPLING = ['Transformers', 'vLLM', 'llama.cpp'];
const set = (v: unknown): boolean => v !== undefined && v !== null;
const nonZero = (v: unknown): boolean => typeof v === 'number' && v !== 0;
const notEmpty = (v: unknown): boolean => v !== null && typeof v === 'object' && Object.keys(v).length > 0;
// A field whose only no-op is one value: anything else asks for something.
const isNot = (noOp: unknown) => (v: unknown): boolean => set(v) && v !== noOp;
const GUIDED = 'use response_format (json_object, json_schema), which the vLLM and llama.cpp engines do';

export const SHARED_RULES: Record<string, Rule> = {
  frequency_penalty: { asks: nonZero, engines: SAMPLING },
  presence_penalty: { asks: nonZero, engines: SAMPLING },
  logit_bias: { asks: notEmpty, engines: SAMPLING },
  seed: { asks: set, engines: ALL_GENERATORS },
  top_k: { asks: (v) => typeof v === 'number' && v > 0, engines: SAMPLING },
  repetition_penalty: { asks: (v) => typeof v === 'number' && v !== 1, engines: SAMPLING },
  // Served by the control plane as n calls (serve-generation.ts), so every generator does it.
  n: { asks: (v) => typeof v === 'number' && v !== 1, engines: ALL_GENERATORS },
  'stream_options.continuous_usage_stats': { asks: (v) => v === true, engines: [], hint: 'usage comes once, in the last chunk, with stream_options.include_usage' },
  // vLLM's extra sampling fields (its OpenAI server's), so a client moving from vLLM is
  // told what is not done here instead of getting an answer made without it. The
  // simulator does ignore_eos by having no end token: it runs to max_tokens or a stop.
  ignore_eos: { asks: (v) => v === true, engines: ALL_GENERATORS },
  min_p: { asks: nonZero, engines: SAMPLING },
  min_tokens: { asks: nonZero, engines: ['vLLM'], hint: 'ignore_eos with max_tokens fixes an answer\'s length on every engine' },
  use_beam_search: { asks: isNot(false), engines: [] },
  length_penalty: { asks: isNot(1), engines: [], hint: 'it applies to beam search, which no engine here does' },
  include_stop_str_in_output: { asks: isNot(false), engines: [], hint: 'a stop string is never part of the answer' },
  skip_special_tokens: { asks: isNot(true), engines: [], hint: 'special tokens are always left out of the text' },
  spaces_between_special_tokens: { asks: isNot(true), engines: [] },
  truncate_prompt_tokens: { asks: set, engines: [], hint: 'a prompt longer than the context is refused, not cut' },
  prompt_logprobs: { asks: set, engines: [] },
  allowed_token_ids: { asks: notEmpty, engines: [], hint: 'logit_bias can make other tokens unlikely' },
  bad_words: { asks: notEmpty, engines: [] },
  // llama-server's own: a GBNF grammar (an empty one asks for nothing, as there).
  grammar: { asks: (v) => typeof v === 'string' && v.length > 0, engines: ['llama.cpp'], hint: 'a GBNF grammar is llama.cpp\'s; on other engines use response_format (json_object, json_schema)' },
  guided_json: { asks: set, engines: [], hint: GUIDED },
  guided_regex: { asks: set, engines: [], hint: GUIDED },
  guided_choice: { asks: set, engines: [], hint: GUIDED },
  guided_grammar: { asks: set, engines: [], hint: GUIDED },
  structured_outputs: { asks: set, engines: [], hint: GUIDED },
  return_tokens_as_token_ids: { asks: isNot(false), engines: [] },
  priority: { asks: isNot(0), engines: [], hint: 'calls are served in arrival order' },
  // Xinference's: the LoRA adapter (loaded at launch) that answers.
  lora_name: { asks: (v) => typeof v === 'string' && v.length > 0, engines: ['Transformers', 'vLLM'], hint: 'launch with peft_model_config.lora_list on the Transformers or vLLM engine' },
};

const namesOneFunction = (choice: unknown): boolean => typeof choice === 'object' && choice !== null && (choice as { type?: unknown }).type === 'function';

export const CHAT_RULES: Record<string, Rule> = {
  ...SHARED_RULES,
  logprobs: { asks: (v) => v === true, engines: ALL_GENERATORS },
  response_format: {
    asks: (v) => (v as { type?: unknown } | null)?.type !== undefined && (v as { type?: unknown }).type !== 'text',
    engines: ['vLLM', 'llama.cpp'],
    hint: 'structured output (json_object, json_schema) is vLLM\'s structured outputs and llama.cpp\'s grammars',
  },
  // Met already when tool_choice names one function: the engines that force a call
  // (llama.cpp, vLLM, the simulator) make exactly one. LangChain's
  // with_structured_output(method="function_calling") sends exactly that pair.
  parallel_tool_calls: { asks: (v, body) => v === false && !namesOneFunction(body.tool_choice), engines: [], hint: 'every tool call the model makes is returned (with tool_choice naming a function, one call is made and false is accepted)' },
  // "auto" and "none" every tool-calling engine does; forcing a call takes constrained decoding.
  tool_choice: {
    asks: (v) => v === 'required' || (typeof v === 'object' && v !== null),
    engines: ['llama.cpp', 'vLLM', 'simulator'],
    hint: 'forcing a tool call ("required" or a named function) needs constrained decoding, which llama.cpp\'s grammars and vLLM\'s structured outputs do (the simulator answers with a call built from the tool\'s schema); "auto" lets the model choose',
  },
  modalities: { asks: (v) => Array.isArray(v) && v.some((m) => m !== 'text'), engines: [], hint: 'only text is generated' },
  audio: { asks: set, engines: [] },
  prediction: { asks: set, engines: [] },
  web_search_options: { asks: set, engines: [] },
  reasoning_effort: { asks: set, engines: [], hint: 'use chat_template_kwargs or enable_thinking for models that think' },
  // `medium` is OpenAI's default: asking for it asks for nothing.
  verbosity: { asks: (v) => set(v) && v !== 'medium', engines: [], hint: 'answers are as long as the model makes them; bound them with max_tokens' },
  functions: { asks: set, engines: [], hint: 'use tools (functions is deprecated by OpenAI)' },
  function_call: { asks: set, engines: [], hint: 'use tool_choice (function_call is deprecated by OpenAI)' },
  store: { asks: (v) => v === true, engines: [], hint: 'this server keeps no completions' },
  service_tier: { asks: (v) => set(v) && v !== 'auto' && v !== 'default', engines: [] },
  // vLLM's chat extras.
  echo: { asks: isNot(false), engines: [], hint: 'echo is a field of /v1/completions' },
  // A completions field: on chat it was accepted and changed nothing.
  best_of: { asks: (v) => typeof v === 'number' && v !== 1, engines: [], hint: 'best_of is a field of /v1/completions (where it is refused too); ask n times and choose' },
  // Where the prompt ends (chat-ending.ts): each engine renders the template itself.
  add_generation_prompt: { asks: isNot(true), engines: ALL_GENERATORS },
  continue_final_message: { asks: isNot(false), engines: ALL_GENERATORS },
};

export const COMPLETION_RULES: Record<string, Rule> = {
  ...SHARED_RULES,
  logprobs: { asks: (v) => typeof v === 'number', engines: ALL_GENERATORS },
  // echo with logprobs scores the prompt's own tokens (OpenAI's legacy completions, vLLM, lm-evaluation-harness).
  echo: {
    asks: (v, body) => v === true && typeof body.logprobs === 'number',
    engines: ['Transformers', 'vLLM'],
    hint: 'echo with logprobs needs the log-probabilities of the prompt\'s own tokens, which llama.cpp\'s server does not compute (and the simulator has no model); echo alone and logprobs alone work on every engine',
  },
  best_of: { asks: (v) => typeof v === 'number' && v !== 1, engines: [] },
  suffix: { asks: (v) => typeof v === 'string' && v.length > 0, engines: [], hint: 'no engine here fills in the middle' },
};

/** A table's rules with each field's path split once, not on every request. */
const compiled = new WeakMap<Record<string, Rule>, Array<{ field: string; path: string[]; rule: Rule }>>();

function rulesOf(rules: Record<string, Rule>): Array<{ field: string; path: string[]; rule: Rule }> {
  let list = compiled.get(rules);
  if (!list) {
    // A dotted name is a field inside an object field (`stream_options.continuous_usage_stats`).
    list = Object.entries(rules).map(([field, rule]) => ({ field, path: field.split('.'), rule }));
    compiled.set(rules, list);
  }
  return list;
}

/** Refuses the first field the model's engine cannot do (400 `parameter_unsupported`, naming it). */
export function checkParameters(body: Record<string, unknown>, rules: Record<string, Rule>, engine: string, model: string): void {
  for (const { field, path, rule } of rulesOf(rules)) {
    let value: unknown = body;
    for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (value === undefined || !rule.asks(value, body) || rule.engines.includes(engine)) continue;
    const who = rule.engines.length > 0 ? `; engines that do: ${rule.engines.join(', ')}` : '';
    throw new HangarError('parameter_unsupported', [field, engine, model, `${who}${rule.hint ? `; ${rule.hint}` : ''}`], { param: field });
  }
}
