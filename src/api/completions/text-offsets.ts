/**
 * OpenAI's `text_offset` of each completion token: where in the answer's text the token
 * begins, in characters (code points, as Python clients and vLLM count them). A token
 * that holds part of a character is spelt `bytes:\xNN` (docs/requests.md), so its
 * spelling's length says nothing of the text: the offsets come from the tokens' own
 * bytes, decoded as the text was. A character begun by an earlier token counts as
 * before this one (the second byte of "é" is at the offset after it).
 */
export class TextOffsets {
  private readonly decoder = new TextDecoder('utf-8');
  /** Characters the bytes so far decoded to, an unfinished last one not counted. */
  private decoded = 0;
  /** The last three bytes, to see whether a character is unfinished. */
  private tail: number[] = [];

  /** This token's offset; then counts it. A token without bytes counts its text. */
  next(token: string, bytes: readonly number[] | null | undefined): number {
    const offset = this.decoded + (unfinished(this.tail) ? 1 : 0);
    const own = bytes ?? [...new TextEncoder().encode(token)];
    this.decoded += [...this.decoder.decode(Uint8Array.from(own), { stream: true })].length;
    this.tail = [...this.tail, ...own].slice(-3);
    return offset;
  }
}

/** Whether the bytes end inside a UTF-8 character: a lead byte followed by fewer continuation bytes than it needs. */
function unfinished(tail: readonly number[]): boolean {
  let continuation = 0;
  for (let k = tail.length - 1; k >= 0; k--) {
    const b = tail[k]!;
    if (b >= 0x80 && b <= 0xbf) {
      continuation++;
      continue;
    }
    const needs = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0;
    return needs > continuation;
  }
  return false;
}
