/**
 * Why a JSON text did not parse, without the text. V8 quotes the text around the fault
 * (`Unexpected token 'P', ..."assword":PW-SECRET-"... is not valid JSON`): echoed in an
 * error answer, a log or a start-up failure, it showed the password a body or an auth
 * file held. The reason and its position (where V8 gives one) are kept.
 */
export function jsonSyntaxReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, ' (the text is not valid JSON)');
}
