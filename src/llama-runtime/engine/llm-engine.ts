import type { Llama, LlamaContext, LlamaGrammar, LlamaModel, Token } from 'node-llama-cpp';
import { InvalidInput } from '../invalid-input.js';
import { ChatPrompt } from './chat-prompt.js';
import { onlyKwargs, type CallContext, type Engine, type Method } from './engine.js';
import { DEFAULT_MAX_CONTEXT } from './engine-options.js';
import { DEFAULT_MAX_TOKENS, parseGenerateConfig, type GenerateConfig } from './generate-config.js';
import { Generation, type GenerationRequest } from './generation.js';
import type { LlamaServerProcess } from './llama-server-process.js';
import { ServerCompletion } from './server-generation.js';
import type { LlamaLoadSpec } from './load-spec.js';
import { SequencePool } from './sequence-pool.js';
import { StructuredOutput, grammarStops } from './structured-output.js';
import { tokenizerMethods } from './tokenizer-methods.js';
import { PRESERVED_TOKENS, type ToolFormat } from './tool-calls.js';
import { checkTokenIds, longPrefix, maxTokenBytes, unfittingPrompt, vocabularySize } from './vocabulary.js';

/**
 * Where tokens come from: node-llama-cpp's context in this process (each call on a
 * sequence of one shared context), or llama.cpp's own server beside it
 * (llama-server-process.ts; each call on one of its slots). Either batches the calls
 * running together into one llama.cpp batch per step.
 */
type Backend = { kind: 'binding'; context: LlamaContext; pool: SequencePool } | { kind: 'server'; server: LlamaServerProcess; contextSize: number; parallel: number };

/**
 * The llama.cpp LLM engine: `chat` and `generate` (the Transformers engine's
 * methods, values and errors; `count_tokens` too), with continuous batching: a new call joins at the
 * next step. Templates, tokens, stop strings, reasoning, tool calls and usage are
 * worked out here on either backend.
 */
export class LlmEngine implements Engine {
  readonly abilities: string[];
  readonly methods: Readonly<Record<string, Method>>;
  private readonly prompt: ChatPrompt | null;
  /** Calls generating on the server now (the binding's pool counts its own). */
  private onServer = 0;
  private readonly grammars: StructuredOutput;
  private readonly reasoningTags: [string, string] | null;
  private readonly vocabulary: number;
  private readonly kept = new Map<string, ReadonlySet<Token>>();
  /** The longest token text in bytes, for the size check before tokenizing (vocabulary.ts). */
  private readonly longestToken: number;

  private constructor(
    llama: Llama,
    private readonly model: LlamaModel,
    private readonly backend: Backend,
    private readonly spec: LlamaLoadSpec,
  ) {
    const template = spec.chatTemplate ?? ggufChatTemplate(model);
    this.prompt = template ? new ChatPrompt(template, specialTokens(model)) : null;
    // No LLM engine here embeds (the GGUF embedding engine serves embedding models): a registration's `embed` is not claimed.
    this.abilities = (spec.abilities ?? (template ? ['generate', 'chat'] : ['generate'])).filter((a) => a !== 'embed');
    this.reasoningTags = this.abilities.includes('reasoning') ? spec.reasoningTags : null;
    this.grammars = new StructuredOutput(llama);
    this.vocabulary = vocabularySize(model);
    this.longestToken = maxTokenBytes(model);
    this.methods = {
      chat: (a, k, c) => this.chat(a, k, c),
      generate: (a, k, c) => this.generate(a, k, c),
      count_tokens: (a, k) => this.countTokens(a, k),
      ...tokenizerMethods({
        model,
        vocabulary: this.vocabulary,
        contextLength: () => this.contextSize,
        // Any length, as vLLM's /tokenize counts it (the route's 1 MiB body bounds the work).
        promptIds: (text, addSpecial) => (addSpecial ? this.withBos(this.model.tokenize(text, true)) : this.model.tokenize(text, true)),
        chatIds: (a, k) => {
          // A chat is refused as count_tokens refuses it: one that leaves no room is no request.
          const ids = this.tokenize(this.chatPrompt('tokenize', a, k).text, 'messages');
          this.roomAfter(ids, 'messages');
          return ids;
        },
        chatTemplate: template,
      }),
    };
  }

  static async create(llama: Llama, model: LlamaModel, spec: LlamaLoadSpec, threads: number | null): Promise<LlmEngine> {
    const cap = contextCap(model, spec);
    const context = await model.createContext({
      // The most that memory allows up to the cap; less than the smaller end is an error.
      contextSize: { min: Math.min(512, cap), max: cap },
      sequences: spec.options.nParallel,
      ...(threads !== null ? { threads } : {}),
    });
    return new LlmEngine(llama, model, { kind: 'binding', context, pool: new SequencePool(context) }, spec);
  }

  /** On llama-server: `model` is the vocabulary only (templates and tokens); the server holds the weights. */
  static onServer(llama: Llama, model: LlamaModel, spec: LlamaLoadSpec, server: LlamaServerProcess): LlmEngine {
    return new LlmEngine(llama, model, { kind: 'server', server, contextSize: contextCap(model, spec), parallel: spec.options.nParallel }, spec);
  }

  private get contextSize(): number {
    return this.backend.kind === 'binding' ? this.backend.context.contextSize : this.backend.contextSize;
  }

  describe(): Record<string, unknown> {
    const parallel = this.backend.kind === 'binding' ? this.backend.context.totalSequences : this.backend.parallel;
    return { context_length: this.contextSize, n_parallel: parallel };
  }

  running(): number {
    return this.backend.kind === 'binding' ? this.backend.pool.running : this.onServer;
  }

  enginePids(): number[] {
    const pid = this.backend.kind === 'server' ? this.backend.server.pid : null;
    return pid === null ? [] : [pid];
  }

  async close(): Promise<void> {
    if (this.backend.kind === 'binding') await this.backend.context.dispose();
    else await this.backend.server.stop();
  }

  private async chat(args: unknown[], kwargs: Record<string, unknown>, call: CallContext): Promise<Record<string, unknown>> {
    onlyKwargs('chat', kwargs, ['generate_config', 'tools', 'tool_choice', 'chat_template_kwargs', 'add_generation_prompt', 'continue_final_message']);
    const config = parseGenerateConfig(kwargs.generate_config);
    if (config.echo) throw new InvalidInput('echo is for generate only');
    const choice = kwargs.tool_choice;
    const { text, tools } = this.chatPrompt('chat', args, kwargs);
    const usesTools = Array.isArray(tools) && tools.length > 0 && this.abilities.includes('tools');
    const forced = usesTools ? this.grammars.forToolChoice(tools, choice) : null;
    if (forced && config.guide) throw new InvalidInput('response_format and a forced tool_choice cannot both shape one answer');
    if (forced && config.grammar !== null) throw new InvalidInput('grammar and a forced tool_choice cannot both shape one answer');
    let toolFormat: ToolFormat | null = usesTools ? this.spec.toolFormat : null;
    // A forced call is written as bare JSON, whatever the family's own markup.
    if (forced) toolFormat = 'json';
    // gpt-oss writes every reply as harmony messages, with tools or without.
    const harmony = this.spec.toolFormat === 'harmony' && !forced;
    const tags = harmony ? null : this.reasoningTags;
    return this.run(call, {
      // The template already wrote any BOS token.
      promptIds: this.tokenize(text, 'messages'),
      promptField: 'messages',
      config,
      toolFormat,
      forcedCall: forced !== null,
      keepTokens: this.keptTokens(harmony ? 'harmony' : toolFormat, tags),
      reasoningTags: tags,
      harmony,
      // DeepSeek-R1's template ends the prompt inside the reasoning, and so does a prefill continued inside it.
      reasoningOpen: tags !== null && (text.trimEnd().endsWith(tags[0]) || (kwargs.continue_final_message === true && text.lastIndexOf(tags[0]) > text.lastIndexOf(tags[1]))),
      echo: '',
      grammar: forced ? await forced : await this.grammarOf(config),
      grammarField: forced ? 'tool_choice' : grammarFieldOf(config),
    });
  }

  /**
   * The prompt tokens a chat call with these arguments would count in its usage
   * (Anthropic's count_tokens): the same template, tokens and refusals, no generation.
   */
  private async countTokens(args: unknown[], kwargs: Record<string, unknown>): Promise<Record<string, unknown>> {
    onlyKwargs('count_tokens', kwargs, ['tools', 'tool_choice', 'chat_template_kwargs', 'add_generation_prompt', 'continue_final_message']);
    const ids = this.tokenize(this.chatPrompt('count_tokens', args, kwargs).text, 'messages');
    this.roomAfter(ids, 'messages');
    return { prompt_tokens: ids.length };
  }

  /** A chat call's prompt text, and the tools its template was given. */
  private chatPrompt(method: string, args: unknown[], kwargs: Record<string, unknown>): { text: string; tools: unknown } {
    if (args.length !== 1) throw new TypeError(`${method}() takes the messages as its one argument, got ${args.length}`);
    if (!this.prompt) throw new InvalidInput('This model has no chat template: register one (chat_template) or use generate');
    // tool_choice "none": the model must not call tools, so it is not told about them.
    const tools = kwargs.tool_choice === 'none' ? undefined : kwargs.tools;
    const rendering = { tools, chatTemplateKwargs: kwargs.chat_template_kwargs, addGenerationPrompt: kwargs.add_generation_prompt !== false, continueFinalMessage: kwargs.continue_final_message === true };
    return { text: this.prompt.render(args[0], rendering), tools };
  }

  private async generate(args: unknown[], kwargs: Record<string, unknown>, call: CallContext): Promise<Record<string, unknown>> {
    onlyKwargs('generate', kwargs, ['generate_config']);
    const prompt = args[0];
    const config = parseGenerateConfig(kwargs.generate_config);
    let ids: Token[];
    let echo = '';
    if (args.length === 1 && Array.isArray(prompt)) {
      // Token ids go to the model as they are (no BOS added), as vLLM's server takes them.
      ids = this.tokenPrompt(prompt);
      if (config.echo) echo = this.model.detokenize(ids, true);
    } else if (args.length === 1 && typeof prompt === 'string') {
      ids = this.withBos(this.tokenize(prompt, 'prompt'));
      if (config.echo) echo = prompt;
    } else {
      throw new TypeError(`prompt must be a string or a list of token ids, got ${typeof prompt}`);
    }
    return this.run(call, {
      promptIds: ids,
      config,
      toolFormat: null,
      keepTokens: new Set(),
      reasoningTags: null,
      harmony: false,
      reasoningOpen: false,
      echo,
      grammar: await this.grammarOf(config),
      grammarField: grammarFieldOf(config),
    });
  }

  /** The grammar the request's response_format or own `grammar` holds the answer to (never both: parseGenerateConfig). */
  private grammarOf(config: GenerateConfig): Promise<LlamaGrammar> | null {
    if (config.guide) return this.grammars.forGuide(config.guide);
    return config.grammar !== null ? this.grammars.forGrammar(config.grammar) : null;
  }

  /**
   * The special tokens a chat reply must keep as text, or its parsers would not see them
   * (detokenizing drops special tokens): the tool format's markup (`[TOOL_CALLS]`,
   * `<｜tool▁call▁begin｜>`) and reasoning tags that are special tokens (`[THINK]`).
   * Strings this vocabulary does not hold as one special token are left out.
   */
  private keptTokens(format: ToolFormat | null, tags: [string, string] | null): ReadonlySet<Token> {
    const key = `${format ?? ''}\n${tags?.join('\n') ?? ''}`;
    const known = this.kept.get(key);
    if (known) return known;
    const kept = new Set<Token>();
    for (const text of [...(format ? PRESERVED_TOKENS[format] : []), ...(tags ?? [])]) {
      const ids = this.model.tokenize(text, true);
      if (ids.length === 1 && this.model.detokenize(ids, false) === '') kept.add(ids[0]!);
    }
    this.kept.set(key, kept);
    return kept;
  }

  /** The tokens left to generate after the prompt; an empty prompt, or one that leaves none, is refused. */
  private roomAfter(promptIds: readonly Token[], field: 'messages' | 'prompt'): number {
    if (promptIds.length === 0) throw new InvalidInput('The prompt is empty', field);
    const contextLength = this.contextSize;
    const room = contextLength - promptIds.length;
    if (room < 1) {
      // Named as OpenAI names it: the messages (chat) or the prompt (completions).
      throw new InvalidInput(`The prompt is ${promptIds.length} tokens, which leaves no room in the model's context of ${contextLength} tokens`, field);
    }
    return room;
  }

  /** A plain prompt gets the BOS token the model's tokenizer adds, as transformers' tokenizer(prompt) does. */
  private withBos(ids: Token[]): Token[] {
    const bos = this.model.tokens.bos;
    return this.model.tokens.shouldPrependBosToken && bos !== null && ids[0] !== bos ? [bos, ...ids] : ids;
  }

  /** A prompt given as token ids, each checked against the vocabulary (as the Python runtime's token_prompt.py). */
  private tokenPrompt(prompt: unknown[]): Token[] {
    if (prompt.length === 0) throw new InvalidInput('prompt: the token list is empty', 'prompt');
    // Before the ids are looked at: a 4 MiB body holds 2M of them.
    this.roomAfter(prompt as Token[], 'prompt');
    return checkTokenIds(prompt, this.vocabulary, 'prompt');
  }

  private tokenize(text: string, field: 'messages' | 'prompt'): Token[] {
    const contextLength = this.contextSize;
    const unfitting = unfittingPrompt(text, contextLength, this.longestToken) ?? longPrefix(text, contextLength, (head) => this.model.tokenize(head, true).length);
    if (unfitting) throw new InvalidInput(unfitting, field);
    // Special-token text (`<|im_start|>`) is the special token, as in transformers' tokenizers.
    return this.model.tokenize(text, true);
  }

  private async run(
    call: CallContext,
    request: Omit<GenerationRequest, 'maxTokens' | 'stop' | 'stopTokenIds' | 'grammarStops'> & { config: GenerateConfig },
  ): Promise<Record<string, unknown>> {
    const { promptIds, config } = request;
    const outside = [...config.logitBias.keys()].filter((t) => t >= this.vocabulary);
    if (outside.length > 0) {
      throw new InvalidInput(`logit_bias: token ids ${JSON.stringify(outside.slice(0, 5))} are outside this model's vocabulary (0 to ${this.vocabulary - 1})`);
    }
    const room = this.roomAfter(promptIds, request.promptField ?? 'prompt');
    const stopTokenIds = new Set(config.ignoreEos ? config.stopTokenIds : [...this.spec.stopTokenIds, ...config.stopTokenIds]);
    const hidden = request.grammar ? grammarStops(request.grammar) : [];
    // An answer held to a JSON schema (response_format, a forced call) ends where the
    // grammar does, and the end-of-turn tokens wait for it: the family's stop strings
    // (`<s>`, `<|im_end|>` as text) only cut a value that holds them, and the answer
    // claimed a schema it was not held to. The request's own stop strings still apply.
    const familyStops = config.guide || request.forcedCall ? [] : this.spec.stop;
    const generation = new Generation(
      this.model,
      {
        ...request,
        maxTokens: Math.min(config.maxTokens ?? DEFAULT_MAX_TOKENS, room),
        // A grammar's output is whole at its stop trigger; what follows is padding.
        stop: [...familyStops, ...config.stop, ...hidden],
        grammarStops: hidden,
        stopTokenIds,
      },
      { stream: call.stream, chunk: (value) => call.chunk(value) },
    );
    if (this.backend.kind === 'server') {
      // llama-server queues a call past its slots itself.
      const completion = new ServerCompletion(this.backend.server, generation.request);
      this.onServer++;
      try {
        return await generation.consume(completion.steps(call.signal), call.signal, () => completion.reason());
      } finally {
        this.onServer--;
      }
    }
    const { pool } = this.backend;
    const sequence = await pool.acquire(call.signal);
    try {
      return await generation.run(sequence, call.signal);
    } finally {
      pool.release(sequence);
    }
  }
}

function ggufChatTemplate(model: LlamaModel): string | null {
  const template = (model.fileInfo.metadata as { tokenizer?: { chat_template?: unknown } }).tokenizer?.chat_template;
  return typeof template === 'string' && template !== '' ? template : null;
}

/** The special tokens' text, under the names transformers gives templates. */
function specialTokens(model: LlamaModel): Record<string, string> {
  const out: Record<string, string> = {};
  const { bos, eos } = model.tokens;
  if (bos !== null) out.bos_token = model.detokenize([bos], true);
  if (eos !== null) out.eos_token = model.detokenize([eos], true);
  return out;
}

function grammarFieldOf(config: GenerateConfig): string | undefined {
  return config.guide ? 'response_format' : config.grammar !== null ? 'grammar' : undefined;
}

/** The context each call may fill: the registration's, the model's trained one, `n_ctx` (default 8192), whichever is least. */
export function contextCap(model: LlamaModel, spec: LlamaLoadSpec): number {
  // A vocabulary-only model (the weights are in llama-server) reports no trained context: the GGUF metadata says it.
  const metadata = model.fileInfo.architectureMetadata as { context_length?: unknown } | undefined;
  const trained = model.trainContextSize > 0 ? model.trainContextSize : typeof metadata?.context_length === 'number' ? metadata.context_length : Infinity;
  return Math.min(spec.contextLength ?? Infinity, trained, spec.options.nCtx ?? DEFAULT_MAX_CONTEXT);
}
