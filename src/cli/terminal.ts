/**
 * Everything the CLI writes goes through here. What it writes mostly comes from a
 * server (model uids, device names, file paths, error messages that echo input) or from
 * a model (chat and generate text), and a terminal obeys escape sequences in it: OSC 52
 * writes the clipboard, CSI clears the screen, `\r` overwrites a line, OSC 0 retitles
 * the window. So every control character but newline and tab is written out as
 * `\u001b` (Xinference prints model text raw; this is the safer choice). The bidi
 * embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069) are written out
 * too: they reorder what follows on the line, so a uid or an error could show text other
 * than the one it holds ("Trojan Source"). The plain direction marks (U+200E, U+200F)
 * reorder nothing beyond their neighbours and stay.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes to stdout, control characters written out. */
export function out(text: string): void {
  process.stdout.write(printable(text));
}

/** Writes to stderr, control characters written out. */
export function err(text: string): void {
  process.stderr.write(printable(text));
}
