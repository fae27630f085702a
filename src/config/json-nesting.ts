/**
 * How deep a JSON value anyone means goes: deeper only exhausts recursion further in
 * (a validator, a listing's structured clone, a pretty-printed file whose size grows
 * with the square of the depth). The body parser holds request bodies to it, and a
 * registration sent as a JSON string (Xinference's shape) is held to it too.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `root` nests deeper than `limit` levels; iterative, so measuring cannot overflow the stack itself. */
export function nestedDeeperThan(root: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
