/**
 * JSON may carry a lone UTF-16 surrogate (`"\ud800"`, often half of an emoji cut by a
 * client that sliced a string): valid JSON, but no UTF-8 encoding exists for it.
 * msgpack writes short strings with its own encoder, which emits the surrogate's bytes
 * as they are (invalid UTF-8 the runtime cannot decode), and long ones with
 * TextEncoder, which writes U+FFFD. Every string bound for a runtime is therefore made
 * well formed here first, the way TextEncoder does it: each lone surrogate becomes
 * U+FFFD, whatever the string's length.
 *
 * Copies only what changes: a message without such a string is returned as it is.
 */
export function wellFormed<T>(value: T): T {
  return fix(value, 0) as T;
}

// Deeper than any message this service builds; a cycle or an absurd nesting stops here.
const MAX_DEPTH = 64;

function fix(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH || ArrayBuffer.isView(value)) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = fix(value[i], depth + 1);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value)) {
    const fixedKey = key.isWellFormed() ? key : key.toWellFormed();
    const fixedItem = fix(item, depth + 1);
    if (fixedKey === key && fixedItem === item) continue;
    out ??= { ...(value as Record<string, unknown>) };
    if (fixedKey !== key) delete out[key];
    out[fixedKey] = fixedItem;
  }
  return out ?? value;
}
