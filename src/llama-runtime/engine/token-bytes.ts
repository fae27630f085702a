import type { LlamaModel, Token } from 'node-llama-cpp';

/**
 * A token's own bytes, for log-probabilities (OpenAI's `bytes`; the Python runtime's
 * token_bytes.py): a token that holds part of a character decodes alone to U+FFFD, whose
 * bytes said nothing of the token, and distinct tokens looked alike. The bytes come from
 * the GGUF's vocabulary: byte-level BPE (`tokenizer.ggml.model` "gpt2": Qwen, Llama 3)
 * maps each byte to one character; SentencePiece ("llama": Llama 2, Mistral) writes a
 * lone byte as `<0xE9>`.
 */
export class TokenBytes {
  private static readonly byModel = new WeakMap<LlamaModel, TokenBytes>();

  /** One per model: the vocabulary is read once. */
  static forModel(model: LlamaModel): TokenBytes {
    let found = TokenBytes.byModel.get(model);
    if (!found) TokenBytes.byModel.set(model, (found = new TokenBytes(model)));
    return found;
  }

  private readonly pieces: readonly unknown[] | null;
  private readonly kind: string | null;

  private constructor(model: LlamaModel) {
    const ggml = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown; model?: unknown } } }).tokenizer?.ggml;
    this.pieces = Array.isArray(ggml?.tokens) ? ggml.tokens : null;
    this.kind = typeof ggml?.model === 'string' ? ggml.model : null;
  }

  /** [token text, bytes]: the decoded text and its bytes, or for part of a character OpenAI's `bytes:\xNN` spelling and the raw bytes. */
  of(token: Token, text: string): [string, number[]] {
    if (!text.includes('\uFFFD')) return [text, [...Buffer.from(text, 'utf8')]];
    const raw = this.raw(token);
    if (raw === null) return [text, [...Buffer.from(text, 'utf8')]];
    try {
      return [new TextDecoder('utf-8', { fatal: true }).decode(raw), [...raw]]; // a real U+FFFD in the vocabulary
    } catch {
      return [`bytes:${[...raw].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('')}`, [...raw]];
    }
  }

  private raw(token: Token): Buffer | null {
    const piece = this.pieces?.[token];
    if (typeof piece !== 'string') return null;
    if (this.kind === 'gpt2') {
      const bytes: number[] = [];
      for (const char of piece) {
        const b = BYTE_DECODER.get(char);
        if (b === undefined) return null;
        bytes.push(b);
      }
      return Buffer.from(bytes);
    }
    if (this.kind === 'llama') {
      const lone = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
      return lone ? Buffer.from([parseInt(lone[1]!, 16)]) : Buffer.from(piece.replaceAll('\u2581', ' '), 'utf8');
    }
    return null;
  }
}

/** GPT-2's bytes_to_unicode, inverted: printable bytes stand for themselves, the rest for the characters from U+0100 up, in byte order. */
const BYTE_DECODER: ReadonlyMap<string, number> = (() => {
  const kept = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const map = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) map.set(String.fromCodePoint(kept(b) ? b : 256 + extra++), b);
  return map;
})();
