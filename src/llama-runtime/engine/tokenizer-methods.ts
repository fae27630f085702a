import type { LlamaModel, Token } from 'node-llama-cpp';
import { InvalidInput } from '../invalid-input.js';
import { onlyKwargs, type Method } from './engine.js';
import { checkTokenIds } from './vocabulary.js';

/** What the LLM engine lends these methods: its prompt rules, so a chat is tokenized as `chat` sends it. */
export interface TokenizerSource {
  model: LlamaModel;
  vocabulary: number;
  contextLength: () => number;
  /** A text's ids as `generate` sends them (the BOS token when the GGUF says so), of any length. */
  promptIds: (text: string, addSpecialTokens: boolean) => Token[];
  /** A chat's ids as `chat` sends them. */
  chatIds: (args: unknown[], kwargs: Record<string, unknown>) => Token[];
  chatTemplate: string | null;
}

/**
 * The model's tokenizer as engine methods, for vLLM's tokenizer routes (`tokenize`,
 * `detokenize`, `tokenizer_info`; docs/runtime-protocol.md, "Tokenizer methods"), as
 * the Python runtime's tokenizer_methods.py answers them.
 */
export function tokenizerMethods(source: TokenizerSource): Record<string, Method> {
  const { model } = source;
  const pieces = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown } } }).tokenizer?.ggml?.tokens;
  const tokenText = (id: Token | null): string | null => (id === null ? null : model.detokenize([id], true));
  return {
    tokenize: async (args, kwargs) => {
      onlyKwargs('tokenize', kwargs, ['add_special_tokens', 'return_token_strs', 'tools', 'chat_template_kwargs', 'add_generation_prompt', 'continue_final_message']);
      const prompt = args[0];
      let ids: Token[];
      if (typeof prompt === 'string') {
        ids = source.promptIds(prompt, kwargs.add_special_tokens !== false);
      } else if (Array.isArray(prompt)) {
        if (kwargs.add_special_tokens === true) throw new InvalidInput('add_special_tokens: true is for a prompt; a chat\'s special tokens are its template\'s', 'add_special_tokens');
        const { add_special_tokens: _special, return_token_strs: _strs, ...chat } = kwargs;
        ids = source.chatIds([prompt], chat);
      } else {
        throw new TypeError(`prompt must be a string or a list of messages, got ${typeof prompt}`);
      }
      const out: Record<string, unknown> = { tokens: ids, max_model_len: source.contextLength() };
      // The vocabulary's own pieces (`▁the`, `Ġthe`), as transformers' convert_ids_to_tokens gives them.
      if (kwargs.return_token_strs === true) out.token_strs = ids.map((id) => (Array.isArray(pieces) ? String(pieces[id]) : model.detokenize([id], true)));
      return out;
    },
    detokenize: async (args, kwargs) => {
      onlyKwargs('detokenize', kwargs, []);
      const tokens = args[0];
      if (!Array.isArray(tokens)) throw new InvalidInput(`tokens must be a list of token ids, got ${typeof tokens}`, 'tokens');
      return { prompt: model.detokenize(checkTokenIds(tokens, source.vocabulary, 'tokens'), true) };
    },
    tokenizer_info: async (_args, kwargs) => {
      onlyKwargs('tokenizer_info', kwargs, []);
      const { bos, eos } = model.tokens;
      return {
        tokenizer_class: 'llama.cpp (GGUF)',
        bos_token: tokenText(bos),
        eos_token: tokenText(eos),
        pad_token: null,
        unk_token: null,
        chat_template: source.chatTemplate,
        model_max_length: source.contextLength(),
        vocab_size: source.vocabulary,
      };
    },
  };
}
