/**
 * Text arrives a token at a time, so a marker (a stop string, `<tool_call>`,
 * `</think>`) may be split across pieces. Whoever scans for one holds back the end
 * of the text that could be the marker's beginning, and no more (the Python
 * runtime's holdback.py).
 */
export function partialMarkerLength(text: string, markers: readonly string[]): number {
  let longest = 0;
  for (const marker of markers) {
    for (let n = Math.min(marker.length - 1, text.length); n > longest; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

/** [safe to hand out, to hold back]. */
export function splitHeld(text: string, markers: readonly string[]): [string, string] {
  const keep = partialMarkerLength(text, markers);
  return keep > 0 ? [text.slice(0, text.length - keep), text.slice(text.length - keep)] : [text, ''];
}
