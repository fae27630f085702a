/**
 * node-llama-cpp's JSON grammars let a number carry an exponent of up to 16 digits
 * ("111115e1111115261532100", "75E321428"): valid JSON text, but every JSON parser
 * reads it as Infinity (or 0), and Python's json.dumps cannot write it back. A sampled
 * model writes such numbers readily, more so on random weights. These rewrites of the
 * grammar text keep numbers finite: integers are plain digits (as JSON Schema means
 * them, of at most 15 digits), and other numbers' exponents have at most two digits,
 * so with the grammar's 16-digit mantissa a number stays below about 1e115.
 *
 * Each rewrite matches one rule exactly as node-llama-cpp writes it; a test holds them
 * to the grammars of the pinned version (test/llama-runtime/finite-numbers.test.ts), so
 * an upgrade that changes them is seen, not silently unguarded.
 */
const REWRITES: ReadonlyArray<[RegExp, string]> = [
  // A JSON schema's integer: no exponent, and at most 15 digits, so every integer is
  // exact in every JSON parser (JavaScript's safe integers end at 9007199254740991).
  [/^(?<head>integer-number-rule ::= "-"\? \("0" \| \[1-9\] \[0-9\]\{0,)15(?<tail>\}\)) \(\[eE\] \[-\+\]\? \("0" \| \[1-9\] \[0-9\]\{0,15\}\)\)\?$/m, '$<head>14$<tail>'],
  // A JSON schema's number: an exponent of one or two digits.
  [/^(fractional-number-rule ::= .*?\(\[eE\] \[-\+\]\? \("0" \| \[1-9\] \[0-9\])\{0,15\}(\)\)\?)$/m, '$1?$2'],
  // json_object's number: an exponent of one or two digits.
  [/^(number ::= .*?\(\[eE\] \[-\+\]\?) \[0-9\] \[1-9\]\{0,15\}(\)\? ws)$/m, '$1 [0-9] [0-9]?$2'],
];

/** The grammar with finite numbers; the same text when it has no number rule. */
export function finiteNumbers(grammar: string): string {
  return REWRITES.reduce((text, [rule, replacement]) => text.replace(rule, replacement), grammar);
}

/** How many of the rewrites a grammar text has rules for (the test's check). */
export function numberRulesIn(grammar: string): number {
  return REWRITES.filter(([rule]) => rule.test(grammar)).length;
}
