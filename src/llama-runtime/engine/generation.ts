import { LlamaGrammarEvaluationState, TokenBias, type LlamaContextSequence, type LlamaGrammar, type LlamaModel, type SequenceEvaluateOptions, type Token } from 'node-llama-cpp';
import { CallAborted } from '../invalid-input.js';
import { Detokenizer } from './detokenizer.js';
import { TokenBytes } from './token-bytes.js';
import type { GenerateConfig } from './generate-config.js';
import { ReasoningSplitter } from './reasoning.js';
import { HarmonyText } from './harmony.js';
import { StopScanner } from './stop-scanner.js';
import { ToolCallText, type ToolCall, type ToolFormat } from './tool-calls.js';

/** Below this a temperature means greedy, as vLLM has it (a tiny one would divide the logits into infinities). */
const GREEDY_BELOW = 1e-5;

/** A generated token, with its candidates' probabilities when log-probabilities were asked for. */
type Step = Token | { token: Token; probabilities?: Map<Token, number> };

/** One call's generation, settled before it runs (the Python runtime's Request). */
export interface GenerationRequest {
  promptIds: Token[];
  config: GenerateConfig;
  /** Already capped by the room the context leaves. */
  maxTokens: number;
  /** The registration's and the request's (and a grammar's, in `grammarStops`). */
  stop: string[];
  /** A grammar's stop triggers among `stop`: they end the text but are not the request's, so no `stop_reason` names them. */
  grammarStops?: readonly string[];
  /** The request's own stop token ids; the model's end tokens stop too unless `ignore_eos`. */
  stopTokenIds: ReadonlySet<number>;
  toolFormat: ToolFormat | null;
  /** The request field a prompt too long is named by: chat's `messages`, completions' `prompt`. */
  promptField?: 'messages' | 'prompt';
  /** The grammar forces a tool call: the reply is never text (tool-calls.ts). */
  forcedCall?: boolean;
  /** Special tokens whose text the reply keeps: the tool format's markup, special reasoning tags. */
  keepTokens: ReadonlySet<Token>;
  reasoningTags: [string, string] | null;
  reasoningOpen: boolean;
  /** A harmony model's chat (gpt-oss): its messages carry reasoning, answer and calls (harmony.ts). */
  harmony: boolean;
  /** generate with echo: the prompt text, sent before the completion. */
  echo: string;
  /** A grammar the output must follow (response_format, a forced tool call). */
  grammar: LlamaGrammar | null;
  /** The request field the grammar came from (`grammar`, `response_format`, `tool_choice`), for its errors. */
  grammarField?: string;
}

/** Where a call's CHUNKs go; a non-stream call gets everything in the value generate() returns. */
export interface ChunkSink {
  readonly stream: boolean;
  chunk(value: Record<string, unknown>): void;
}

interface LogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs?: LogprobEntry[];
}

/**
 * Runs one request on one context sequence, token by token: end tokens, text, stop
 * strings, reasoning, tool calls, echo, usage and log-probabilities, and the stream's
 * CHUNKs or the one RESULT value (docs/runtime-protocol.md, "llama_cpp"). Text flows
 * token -> detokenizer -> stop strings -> reasoning split -> tool-call filter -> out,
 * as in the Transformers engine. The sequences of one context evaluate together:
 * node-llama-cpp puts every sequence's next token into one llama.cpp batch.
 */
export class Generation {
  private readonly detok: Detokenizer;
  private readonly stops: StopScanner;
  private readonly tools: ToolCallText | null;
  private readonly harmony: HarmonyText | null;
  private readonly reasoning: ReasoningSplitter | null;
  private readonly generatedIds: Token[] = [];
  private logprobs: LogprobEntry[] = [];
  private readonly text: string[] = [];
  /** A CHUNK has been sent. */
  private chunked = false;
  private readonly thought: string[] = [];
  private echo: string;
  /** The request's own stop token that ended the answer, when one did. */
  private stopToken: Token | null = null;

  constructor(
    private readonly model: LlamaModel,
    readonly request: GenerationRequest,
    private readonly sink: ChunkSink,
  ) {
    this.detok = new Detokenizer(model, request.promptIds, request.keepTokens);
    this.stops = new StopScanner(request.stop);
    this.harmony = request.harmony ? new HarmonyText() : null;
    this.tools = request.toolFormat && !this.harmony ? new ToolCallText(request.toolFormat, request.forcedCall === true) : null;
    this.reasoning = request.reasoningTags ? new ReasoningSplitter(...request.reasoningTags, request.reasoningOpen) : null;
    this.echo = request.echo;
  }

  /** Generates to the end; returns the RESULT value (a stream: its last CHUNK's). Throws CallAborted when `signal` fires. */
  async run(sequence: LlamaContextSequence, signal: AbortSignal): Promise<Record<string, unknown>> {
    const { config, promptIds } = this.request;
    const input = await reuseCachedPrefix(sequence, promptIds);
    const options = this.evaluateOptions();
    const steps = config.topLogprobs !== null ? sequence.evaluateWithMetadata(input, { probabilities: true }, options) : sequence.evaluate(input, options);
    return this.consume(steps, signal);
  }

  /**
   * Takes tokens (with their candidates' probabilities when log-probabilities were
   * asked for) from any source, node-llama-cpp's sequence or llama-server's stream
   * (server-generation.ts), until one ends the answer or the source ends.
   */
  async consume(steps: AsyncGenerator<Step | Step[]>, signal: AbortSignal, ended: () => 'stop' | 'length' = () => 'stop'): Promise<Record<string, unknown>> {
    const wantsLogprobs = this.request.config.topLogprobs !== null;
    let reason: 'stop' | 'length' | null = null;
    try {
      const take = (step: Step): 'stop' | 'length' | null => {
        const token = typeof step === 'number' ? step : step.token;
        if (wantsLogprobs && typeof step !== 'number' && step.probabilities) this.logprobs.push(this.logprobEntry(token, step.probabilities));
        return this.accept(token);
      };
      read: for await (const taken of steps) {
        if (signal.aborted) throw new CallAborted();
        // A source may hand over several tokens at once (llama-server's stream, a read at a time).
        if (!Array.isArray(taken)) {
          reason = take(taken);
          if (reason) break;
          continue;
        }
        for (const step of taken) {
          reason = take(step);
          if (reason) break read;
        }
      }
    } finally {
      // Ending the generator stops the evaluation; the sequence keeps its cache for the next call.
      await steps.return(undefined);
    }
    if (signal.aborted) throw new CallAborted();
    return this.finish(reason ?? ended());
  }

  private evaluateOptions(): SequenceEvaluateOptions & { yieldEogToken: boolean } {
    const { config, grammar } = this.request;
    const greedy = config.temperature < GREEDY_BELOW || config.topK === 1;
    const options: SequenceEvaluateOptions & { yieldEogToken: boolean } = {
      // The end token is ours to see: it counts as generated, and ignore_eos runs past it.
      yieldEogToken: true,
      temperature: greedy ? 0 : config.temperature,
      topK: config.topK,
      topP: config.topP,
      minP: config.minP,
      // node-llama-cpp's default seed is the clock; a random one is the same and says so.
      seed: config.seed ?? Math.floor(Math.random() * 2 ** 31),
    };
    const penalize = config.repetitionPenalty !== 1 || config.frequencyPenalty !== 0 || config.presencePenalty !== 0;
    if (penalize) {
      // OpenAI's penalties count the tokens generated so far (not the prompt), as the
      // Transformers engine and vLLM do; llama.cpp applies repetition's to the same set.
      options.repeatPenalty = {
        punishTokens: () => this.generatedIds,
        maxPunishTokens: Math.max(64, this.request.maxTokens),
        penalty: config.repetitionPenalty,
        frequencyPenalty: config.frequencyPenalty,
        presencePenalty: config.presencePenalty,
      };
    }
    if (config.logitBias.size > 0) {
      // OpenAI's logit_bias adds to the logits, end tokens included (a bias of -100 on
      // the end token is how clients ask for a long answer). TokenBias.set() skips end
      // tokens, so the values go into the map it hands llama.cpp's logit-bias sampler
      // as they are (node-llama-cpp is pinned; the llama.cpp tests cover it).
      const bias = new TokenBias(this.model.tokenizer);
      const biases = (bias as unknown as { _biases: Map<Token, number> })._biases;
      for (const [token, amount] of config.logitBias) biases.set(token as Token, amount);
      options.tokenBias = bias;
    }
    if (grammar) options.grammarEvaluationState = new LlamaGrammarEvaluationState({ model: this.model, grammar });
    return options;
  }

  /** Takes one generated token; returns why generation ends, or null to go on. */
  private accept(token: Token): 'stop' | 'length' | null {
    if (this.echo) {
      this.send(this.echo);
      this.echo = '';
    }
    this.generatedIds.push(token);
    const { config, stopTokenIds, maxTokens } = this.request;
    if (stopTokenIds.has(token) || (!config.ignoreEos && this.model.isEogToken(token))) {
      // One of the request's own stop tokens: vLLM's stop_reason names it.
      if (config.stopTokenIds.includes(token)) this.stopToken = token;
      return 'stop';
    }
    this.emit(this.stops.feed(this.detok.add(token)));
    if (this.stops.stopped) return 'stop';
    return this.generatedIds.length >= maxTokens ? 'length' : null;
  }

  private finish(reason: 'stop' | 'length'): Record<string, unknown> {
    if (!this.stops.stopped) {
      // Text held back for a possible stop string (or a half character) turned out to be just text.
      this.emit(this.stops.feed(this.detok.flush()) + this.stops.flush());
    }
    if (this.reasoning) {
      const [thought, answer] = this.reasoning.finish();
      this.send(this.tools ? this.tools.feed(answer) : answer, thought);
    }
    let toolCalls: ToolCall[] = [];
    if (this.harmony) {
      const [thought, answer, calls] = this.harmony.finish();
      this.send(answer, thought);
      // Calls count where the request gave tools; without them a call is not the answer asked for.
      if (this.request.toolFormat) toolCalls = calls;
    }
    if (this.tools) {
      let rest: string;
      [rest, toolCalls] = this.tools.finish();
      this.send(rest);
    }
    const prompt = this.request.promptIds.length;
    const completion = this.generatedIds.length;
    const final: Record<string, unknown> = {
      text: this.sink.stream ? '' : this.text.join(''),
      // A forced call the limit cut short ends for that reason, as OpenAI's does.
      finish_reason: toolCalls.length > 0 && !this.tools?.truncated ? 'tool_calls' : reason,
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    };
    if (toolCalls.length > 0) final.tool_calls = toolCalls;
    // Which stop string ended the text (Anthropic's `stop_sequence`; docs/runtime-protocol.md).
    else if (reason === 'stop' && this.stops.matched !== null && !this.request.grammarStops?.includes(this.stops.matched)) final.stop_sequence = this.stops.matched;
    else if (reason === 'stop' && this.stopToken !== null) final.stop_token_id = this.stopToken;
    if (this.request.config.topLogprobs !== null) final.logprobs = this.takeLogprobs();
    if (this.thought.length > 0) final.reasoning_content = this.thought.join('');
    return final;
  }

  /** Generated text, through the reasoning split and the tool-call filter. */
  private emit(text: string): void {
    let thought = '';
    if (this.harmony) [thought, text] = this.harmony.feed(text);
    if (this.reasoning) [thought, text] = this.reasoning.feed(text);
    if (this.tools) text = this.tools.feed(text);
    this.send(text, thought);
  }

  private send(text: string, thought = ''): void {
    if (!text && !thought) return;
    if (!this.sink.stream) {
      this.text.push(text);
      if (thought) this.thought.push(thought);
      return;
    }
    const chunk: Record<string, unknown> = { text };
    if (thought) chunk.reasoning_content = thought;
    if (this.request.config.topLogprobs !== null) chunk.logprobs = this.takeLogprobs();
    if (!this.chunked) {
      // The first CHUNK says the prompt's size (Anthropic's message_start carries it).
      chunk.prompt_tokens = this.request.promptIds.length;
      this.chunked = true;
    }
    this.sink.chunk(chunk);
  }

  private takeLogprobs(): LogprobEntry[] {
    const taken = this.logprobs;
    this.logprobs = [];
    return taken;
  }

  /**
   * OpenAI's shape, from llama.cpp's candidate probabilities after its samplers (top-k,
   * top-p, min-p and temperature; greedy: the model's own softmax). Tokens the samplers
   * removed are not among the alternatives.
   */
  private logprobEntry(token: Token, probabilities: Map<Token, number>): LogprobEntry {
    const entry = this.tokenLogprob(token, probabilities.get(token) ?? 0);
    const top = this.request.config.topLogprobs ?? 0;
    entry.top_logprobs = [];
    if (top > 0) {
      const best = [...probabilities.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
      entry.top_logprobs = best.map(([t, p]) => this.tokenLogprob(t, p));
    }
    return entry;
  }

  private tokenLogprob(token: Token, probability: number): LogprobEntry {
    const [text, bytes] = TokenBytes.forModel(this.model).of(token, this.model.detokenize([token], false));
    return { token: text, logprob: probability > 0 ? Math.max(Math.log(probability), -9999) : -9999, bytes };
  }
}

/**
 * What of the prompt the sequence must still evaluate: the tokens after the longest
 * prefix its cache already holds (a chat's earlier turns, a shared system prompt).
 * At least the last prompt token is evaluated again, for the logits of the next.
 */
async function reuseCachedPrefix(sequence: LlamaContextSequence, promptIds: Token[]): Promise<Token[]> {
  const { firstDifferentIndex } = sequence.compareContextTokens(promptIds);
  const keep = Math.min(firstDifferentIndex, promptIds.length - 1);
  if (keep < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
  return promptIds.slice(keep);
}
