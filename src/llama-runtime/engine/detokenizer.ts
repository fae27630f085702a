import type { LlamaModel, Token } from 'node-llama-cpp';

// Prompt tokens kept in the first window, so the first generated word gets the
// spacing it would have had in the whole text.
const PROMPT_CONTEXT = 5;
const REPLACEMENT = '\ufffd';

/**
 * Token ids to text, one token at a time (the Python runtime's detokenizer.py): a
 * byte-level token may hold half of a UTF-8 character, and SentencePiece tokenizers
 * drop a word's leading space when it starts the decoded span. So each step decodes
 * a short window of recent tokens and hands out what the new token added to it,
 * waiting while the text ends in U+FFFD. Special tokens are not text.
 */
export class Detokenizer {
  private readonly ids: Token[];
  private prefix = 0;
  private read: number;

  /** `keep`: special tokens whose text is output (a tool format's markup, reasoning tags that are special tokens). */
  constructor(
    private readonly model: LlamaModel,
    promptIds: readonly Token[],
    private readonly keep: ReadonlySet<Token> = new Set(),
  ) {
    this.ids = promptIds.slice(-PROMPT_CONTEXT);
    this.read = this.ids.length;
  }

  add(token: Token): string {
    this.ids.push(token);
    const prefixText = this.decode(this.prefix, this.read);
    const text = this.decode(this.prefix, this.ids.length);
    if (text.length > prefixText.length && !text.endsWith(REPLACEMENT)) {
      this.prefix = this.read;
      this.read = this.ids.length;
      // The window only ever spans a few tokens: drop what lies before it.
      if (this.prefix > 64) {
        this.ids.splice(0, this.prefix);
        this.read -= this.prefix;
        this.prefix = 0;
      }
      return text.slice(prefixText.length);
    }
    return '';
  }

  /** Whatever is still waiting (an unfinished character shows as U+FFFD). */
  flush(): string {
    const prefixText = this.decode(this.prefix, this.read);
    const text = this.decode(this.prefix, this.ids.length);
    this.prefix = this.read = this.ids.length;
    return text.slice(prefixText.length);
  }

  private decode(start: number, end: number): string {
    if (end <= start) return '';
    const ids = this.ids.slice(start, end);
    if (this.keep.size === 0 || !ids.some((id) => this.keep.has(id))) return this.model.detokenize(ids, false);
    // Runs of ordinary tokens decode together (spacing, multi-byte characters); a kept token as its special text.
    let text = '';
    let run: Token[] = [];
    for (const id of ids) {
      if (!this.keep.has(id)) {
        run.push(id);
        continue;
      }
      if (run.length > 0) text += this.model.detokenize(run, false);
      run = [];
      text += this.model.detokenize([id], true);
    }
    return run.length > 0 ? text + this.model.detokenize(run, false) : text;
  }
}
