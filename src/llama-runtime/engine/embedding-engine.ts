import type { LlamaEmbeddingContext, LlamaModel, Token } from 'node-llama-cpp';
import { InvalidInput } from '../invalid-input.js';
import { onlyKwargs, type Engine, type Method } from './engine.js';
import { DEFAULT_MAX_CONTEXT } from './engine-options.js';
import type { LlamaLoadSpec } from './load-spec.js';
import { vocabularySize } from './vocabulary.js';

/**
 * GGUF embedding models (a pooling type in the file: BERT-style encoders, and
 * decoder models converted with one). `embed` takes the sentence-transformers
 * engine's arguments and answers its shape: unit-length vectors (llama.cpp's own
 * server normalises the same way), `dimensions` cuts and re-normalises, and an input
 * over `max_tokens` is cut or, with `truncate: false`, refused naming its index.
 * Inputs are evaluated one after another on the embedding context.
 */
export class EmbeddingEngine implements Engine {
  readonly abilities = ['embed'];
  readonly methods: Readonly<Record<string, Method>>;
  private readonly maxTokens: number;
  private readonly specials: number;
  private readonly vocabulary: number;
  private busy = 0;

  private constructor(private readonly model: LlamaModel, private readonly context: LlamaEmbeddingContext, contextSize: number) {
    // The BOS/EOS (CLS/SEP) tokens the library adds to every input count towards the limit.
    this.specials = context.calculateInputLength([]);
    this.maxTokens = contextSize - 1;
    this.vocabulary = vocabularySize(model);
    this.methods = { embed: (args, kwargs) => this.embed(args, kwargs) };
  }

  static async create(model: LlamaModel, spec: LlamaLoadSpec, threads: number | null): Promise<EmbeddingEngine> {
    const contextSize = Math.min(spec.maxTokens ?? Infinity, model.trainContextSize, spec.options.nCtx ?? DEFAULT_MAX_CONTEXT) + 1;
    const context = await model.createEmbeddingContext({ contextSize, ...(threads !== null ? { threads } : {}) });
    return new EmbeddingEngine(model, context, contextSize);
  }

  describe(): Record<string, unknown> {
    return { dimensions: this.model.embeddingVectorSize, max_tokens: this.maxTokens };
  }

  running(): number {
    return this.busy;
  }

  // Embeddings run in this process (node-llama-cpp); no engine process of its own.
  enginePids(): number[] {
    return [];
  }

  async close(): Promise<void> {
    await this.context.dispose();
  }

  private async embed(args: unknown[], kwargs: Record<string, unknown>): Promise<Record<string, unknown>> {
    onlyKwargs('embed', kwargs, ['dimensions', 'truncate']);
    const inputs = args[0];
    if (args.length !== 1 || !Array.isArray(inputs) || inputs.length === 0) throw new InvalidInput('embed takes a non-empty list of inputs');
    const truncate = kwargs.truncate ?? true;
    if (typeof truncate !== 'boolean') throw new InvalidInput('truncate must be true or false');
    const dimensions = kwargs.dimensions ?? null;
    const size = this.model.embeddingVectorSize;
    if (dimensions !== null && (typeof dimensions !== 'number' || !Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > size)) {
      throw new InvalidInput(`dimensions must be an integer from 1 to ${size}, got ${JSON.stringify(dimensions)}`, 'dimensions');
    }
    const tokenLists = inputs.map((input, index) => this.tokens(input, index, truncate));
    const embeddings: number[][] = [];
    let promptTokens = 0;
    this.busy++;
    try {
      for (const tokens of tokenLists) {
        promptTokens += tokens.length + this.specials;
        const { vector } = await this.context.getEmbeddingFor(tokens);
        embeddings.push(normalized(dimensions === null ? [...vector] : vector.slice(0, dimensions)));
      }
    } finally {
      this.busy--;
    }
    return { embeddings, prompt_tokens: promptTokens };
  }

  private tokens(input: unknown, index: number, truncate: boolean): Token[] {
    let tokens: Token[];
    // An empty text has no tokens, and llama.cpp answered it with a vector of length 0.
    if (input === '') throw new InvalidInput(`input ${index} is empty: llama.cpp embeds no empty text`, 'input');
    if (typeof input === 'string') tokens = this.model.tokenize(input, false);
    else if (Array.isArray(input) && input.every((t) => Number.isSafeInteger(t))) {
      const outside = (input as number[]).find((t) => t < 0 || t >= this.vocabulary);
      if (outside !== undefined) throw new InvalidInput(`input ${index}: token id ${outside} is outside the vocabulary`);
      tokens = input as Token[];
    } else throw new InvalidInput(`input ${index} must be a string or a list of token ids`);
    const room = this.maxTokens - this.specials;
    if (tokens.length > room) {
      if (!truncate) throw new InvalidInput(`input ${index} has ${tokens.length + this.specials} tokens, more than the model's ${this.maxTokens}`);
      tokens = tokens.slice(0, room);
    }
    return tokens;
  }

}

function normalized(vector: number[]): number[] {
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return norm > 0 ? vector.map((v) => v / norm) : vector;
}
