import type { Token } from 'node-llama-cpp';
import type { GenerationRequest } from './generation.js';
import type { LlamaServerProcess } from './llama-server-process.js';
import type { ServerEvent } from './server-stream.js';
import { InvalidInput } from '../invalid-input.js';

/** Below this a temperature means greedy, as in generation.ts. */
const GREEDY_BELOW = 1e-5;

/** One generated token and, when log-probabilities were asked for, its candidates' probabilities. */
export interface ServerStep {
  token: Token;
  probabilities?: Map<Token, number>;
}

/**
 * A call's generation run by llama-server (llama-server-process.ts): the request as
 * its `/completion` body, and its streamed answer as the tokens Generation.consume
 * takes, so text, stop strings, reasoning, tool calls and usage go through the same
 * code as on node-llama-cpp. `reason()` says why the server stopped, once it has.
 */
export class ServerCompletion {
  private stoppedFor: 'stop' | 'length' = 'stop';

  constructor(
    private readonly server: LlamaServerProcess,
    private readonly request: GenerationRequest,
  ) {}

  reason(): 'stop' | 'length' {
    return this.stoppedFor;
  }

  body(): Record<string, unknown> {
    const { config, grammar, maxTokens } = this.request;
    const greedy = config.temperature < GREEDY_BELOW || config.topK === 1;
    const penalize = config.repetitionPenalty !== 1 || config.frequencyPenalty !== 0 || config.presencePenalty !== 0;
    const top = config.topLogprobs;
    return {
      // Token ids: the runtime tokenized (and templated) the prompt; the server adds nothing.
      prompt: this.request.promptIds,
      n_predict: maxTokens,
      stream: true,
      return_tokens: true,
      // The slot keeps the prompt's prefix for the next call, as the binding's sequences do.
      cache_prompt: true,
      // Below zero: greedy, with the model's own softmax as the log-probabilities (greedy on the binding too).
      temperature: greedy ? -1 : config.temperature,
      top_k: config.topK,
      top_p: config.topP,
      min_p: config.minP,
      seed: config.seed ?? Math.floor(Math.random() * 2 ** 31),
      // llama-server's default penalty is 1.1 over 64 tokens: off unless asked, as OpenAI's.
      repeat_penalty: config.repetitionPenalty,
      repeat_last_n: penalize ? Math.max(64, maxTokens) : 0,
      frequency_penalty: config.frequencyPenalty,
      presence_penalty: config.presencePenalty,
      logit_bias: [...config.logitBias].map(([token, bias]) => [token, bias]),
      // The end token is ours to see (it counts as generated); ignore_eos runs past it.
      ignore_eos: config.ignoreEos,
      n_probs: top === null ? 0 : Math.max(1, top),
      post_sampling_probs: !greedy,
      ...(grammar ? { grammar: grammar.grammar } : {}),
    };
  }

  /** The streamed tokens, as many as each read of the stream brought; ends when the server stops, or when the consumer stops reading (which cancels it there). */
  async *steps(signal: AbortSignal): AsyncGenerator<ServerStep[]> {
    const wantsLogprobs = this.request.config.topLogprobs !== null;
    for await (const events of grammarFaults(this.server.stream('/completion', this.body(), signal), this.request.grammarField)) {
      const steps: ServerStep[] = [];
      let stopped = false;
      for (const event of events) {
        const tokens = Array.isArray(event.tokens) ? (event.tokens as Token[]) : [];
        const probabilities = wantsLogprobs ? candidates(event) : [];
        for (const [i, token] of tokens.entries()) steps.push(probabilities[i] ? { token, probabilities: probabilities[i] } : { token });
        if (event.stop === true) {
          this.stoppedFor = event.stop_type === 'limit' ? 'length' : 'stop';
          stopped = true;
          break;
        }
      }
      if (steps.length > 0) yield steps;
      if (stopped) return;
    }
  }
}

/**
 * A grammar that allows nothing the model's vocabulary can write (`root ::= "\x00"`,
 * an empty range) fails in llama-server at the first token, "Unexpected empty grammar
 * stack": the request's fault, named by the field the grammar came from, not a 500.
 */
async function* grammarFaults<T>(events: AsyncGenerator<T>, field: string | undefined): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (err) {
    if (field && /empty grammar stack/i.test((err as Error).message)) {
      throw new InvalidInput(`${field}: no text this model can write follows the grammar (llama.cpp: ${(err as Error).message.replace(/^llama-server \S+: /, '')})`, field);
    }
    throw err;
  }
}

/**
 * Each token's candidates as probabilities: after the samplers (`post_sampling_probs`:
 * `prob`, `top_probs`), or for greedy decoding the model's softmax (`logprob`,
 * `top_logprobs`), as the binding reports them.
 */
function candidates(event: ServerEvent): Array<Map<Token, number>> {
  const entries = Array.isArray(event.completion_probabilities) ? (event.completion_probabilities as Array<Record<string, unknown>>) : [];
  return entries.map((entry) => {
    const map = new Map<Token, number>();
    const add = (item: Record<string, unknown>): void => {
      const id = item.id as Token;
      const p = typeof item.prob === 'number' ? item.prob : typeof item.logprob === 'number' ? Math.exp(item.logprob) : null;
      if (typeof id === 'number' && p !== null) map.set(id, p);
    };
    for (const item of (entry.top_probs ?? entry.top_logprobs ?? []) as Array<Record<string, unknown>>) add(item);
    add(entry);
    return map;
  });
}
