import { z } from 'zod';

/**
 * Sampling fields shared by chat and completions (OpenAI's names, plus vLLM/Xinference
 * extras `top_k`, `repetition_penalty`, `stop_token_ids`, `ignore_eos`, `min_p`,
 * `min_tokens`). Fields OpenAI clients send that change nothing (`user`, `logprobs:
 * false`, penalties of 0) are accepted; whether the model's engine does the rest is
 * parameter-support.ts's question.
 */
export const samplingShape = {
  max_tokens: z.int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.int().min(-1).nullish(),
  seed: z.int().nullish(),
  // An empty stop string would end every answer before its first token (vLLM refuses it too).
  stop: z.union([z.string().min(1, 'stop strings must not be empty'), z.array(z.string().min(1, 'stop strings must not be empty')).max(16)]).nullish(),
  stop_token_ids: z.array(z.int().min(0)).nullish(),
  // vLLM's (what `vllm bench serve --ignore-eos` sends): the model's end tokens do not end the answer.
  ignore_eos: z.boolean().nullish(),
  // vLLM's: drop tokens less likely than min_p times the likeliest; no end before min_tokens.
  min_p: z.number().min(0).max(1).nullish(),
  min_tokens: z.int().min(0).nullish(),
  // Below 0.01 the penalised logits overflow (the runtimes refuse it too); 1 is off.
  repetition_penalty: z.number().min(0.01).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  // Digits only, and a count JavaScript holds exactly (a 20-digit key passed here and was the engine's 400, named otherwise).
  logit_bias: z.record(z.string().regex(/^\d{1,15}$/, 'keys must be token ids'), z.number().min(-100).max(100)).nullish(),
  // llama-server's (and Xinference's llama.cpp engine's, which hands the body to it): a
  // GBNF grammar the answer must follow. The llama.cpp engine parses it.
  grammar: z.string().max(256 * 1024).nullish(),
  // Xinference's: the LoRA adapter that answers (also `model: "<uid>:<lora_name>"`, vLLM's way).
  lora_name: z.string().nullish(),
  // Checked against the engine (parameter-support.ts): none does n > 1 yet.
  n: z.int().min(1).max(128).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z
    .object({
      include_usage: z.boolean().nullish(),
      // Ours (vLLM's --stream-interval, per request): at most one event per this many tokens.
      stream_interval: z.int().min(1).max(1024).nullish(),
      // vLLM's: usage in every chunk. Kept so that parameter-support.ts can refuse it.
      continuous_usage_stats: z.boolean().nullish(),
    })
    .nullish(),
};

/**
 * OpenAI's and vLLM's rule: `stream_options` says how a stream is sent, so a request
 * that does not stream may not carry one (a null one is no option). Both servers answer
 * 400 naming it; accepting it would hide a client's mistake (it waits for usage chunks
 * that never come).
 */
export const streamOptionsNeedStream: [(body: { stream?: boolean | null; stream_options?: unknown }) => boolean, { message: string; path: PropertyKey[] }] = [
  (body) => body.stream_options === undefined || body.stream_options === null || body.stream === true,
  { message: 'stream_options is only allowed when stream is true', path: ['stream_options'] },
];

type Sampling = { [K in keyof typeof samplingShape]?: z.infer<(typeof samplingShape)[K]> };

/** The runtime's `generate_config` (docs/runtime-protocol.md): only what was given. */
export function toGenerateConfig(body: Sampling, maxTokens: number | null | undefined): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const copy = (key: keyof Sampling, value: unknown): void => {
    if (value !== null && value !== undefined) config[key] = value;
  };
  copy('max_tokens', maxTokens);
  copy('temperature', body.temperature);
  copy('top_p', body.top_p);
  copy('top_k', body.top_k);
  copy('seed', body.seed);
  copy('stop', body.stop);
  copy('stop_token_ids', body.stop_token_ids);
  if (body.ignore_eos) config.ignore_eos = true;
  if (body.min_p) config.min_p = body.min_p;
  if (body.min_tokens) config.min_tokens = body.min_tokens;
  copy('repetition_penalty', body.repetition_penalty);
  copy('frequency_penalty', body.frequency_penalty);
  copy('presence_penalty', body.presence_penalty);
  copy('logit_bias', body.logit_bias);
  if (body.lora_name) config.lora_name = body.lora_name;
  if (body.grammar) config.grammar = body.grammar;
  return config;
}

/** Asks the runtime for token log-probabilities (`top` alternatives each), when the request did. */
export function withLogprobs(config: Record<string, unknown>, top: number | null): Record<string, unknown> {
  if (top !== null) {
    config.logprobs = true;
    config.top_logprobs = top;
  }
  return config;
}

/** One token's log-probability as the runtime sends it (OpenAI's chat shape). */
/**
 * One token's log-probability entry (the runtime's, OpenAI chat's shape). On completions
 * with `echo`, the list starts with the prompt's tokens, the first of which has neither
 * a log-probability nor alternatives (null), as OpenAI's legacy completions answer.
 */
export interface TokenLogprob {
  token: string;
  logprob: number | null;
  bytes?: number[] | null;
  top_logprobs?: Array<{ token: string; logprob: number; bytes?: number[] | null }> | null;
}

/** The runtime's answer for one generation (non-stream RESULT, or a stream CHUNK). */
export interface Generation {
  text: string;
  reasoning_content?: string;
  tool_calls?: unknown[];
  finish_reason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  logprobs?: TokenLogprob[] | null;
  /** A stream's first CHUNK: the prompt's tokens, known before the answer's usage. */
  prompt_tokens?: number;
  /** The last: the stop string that ended the text, when one did (a registration's or the request's). */
  stop_sequence?: string;
  /** The last: the request's own stop token (`stop_token_ids`) that ended the answer, when one did. */
  stop_token_id?: number;
}

/**
 * vLLM's `stop_reason` for an OpenAI choice: the stop string that ended the text, or the
 * id of the request's own stop token (`stop_token_ids`) that ended it, or null when an
 * end token of the model, the length or a tool call ended it.
 */
export function stopReasonOf(g: Generation | null): string | number | null {
  if (g?.finish_reason !== 'stop') return null;
  if (typeof g.stop_sequence === 'string') return g.stop_sequence;
  return typeof g.stop_token_id === 'number' ? g.stop_token_id : null;
}

export function asGeneration(value: unknown): Generation {
  const v = (value && typeof value === 'object' ? value : {}) as Partial<Generation>;
  return { ...v, text: typeof v.text === 'string' ? v.text : '' };
}
