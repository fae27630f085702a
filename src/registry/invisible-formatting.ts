/**
 * Why a name or uid may not hold invisible formatting (Unicode's Cf: a zero-width space,
 * a right-to-left override): it lets one pass for another, or show its text reversed,
 * in every listing, log and page. Null when it holds none.
 */
export function invisibleFormatting(text: string): string | null {
  const found = /\p{Cf}/u.exec(text);
  if (!found) return null;
  return `it must not hold invisible formatting characters; it has U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
