/**
 * What an error message or a log line may repeat of a request's input. A bad 5 MB
 * input must not come back as a 10 MB answer (the contract's body says the message
 * twice, as `detail` and `error.message`) or a 5 MB log line: the start says what was
 * wrong, and the cut says how much more there was.
 */
// An engine's own message explaining a failure (what to download, where) runs to a
// few hundred characters; a value it quotes is what this cuts.
export const ECHO_LIMIT = 1000;
/** A whole message (or log line) after its parts were clipped: a list of names fits. */
export const MESSAGE_LIMIT = 2000;

export function clipText(text: string, limit = ECHO_LIMIT): string {
  if (text.length <= limit) return text;
  // Not inside a surrogate pair: a lone half would make the answer ill-formed text.
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}
