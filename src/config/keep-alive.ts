/**
 * `keep_alive`, as Ollama takes it (docs/on-demand.md, "Idle unload"): how long a
 * model stays loaded with no request before it is unloaded. A duration such as `5m`,
 * `30s`, `1h30m` or `250ms`; a number of seconds; `0` to unload once the request that
 * says so is answered; any negative value (`-1`, `-1m`) for never. Answers
 * milliseconds, or null for never; throws an Error naming what is wrong.
 */
export function parseKeepAlive(value: unknown): number | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`keep_alive must be a duration such as "5m", a number of seconds, 0 or -1; got ${value}`);
    return value < 0 ? null : finiteMs(value * 1000);
  }
  if (typeof value !== 'string') throw new Error(`keep_alive must be a duration such as "5m", a number of seconds, 0 or -1; got ${JSON.stringify(value)}`);
  const text = value.trim().toLowerCase();
  if (text === 'never' || text === 'forever') return null;
  if (/^-?\d+(\.\d+)?$/.test(text)) return parseKeepAlive(Number(text));
  // Go's durations (Ollama's) take a sign, `+5m` too, and microseconds and nanoseconds.
  const negative = text.startsWith('-');
  const body = negative || text.startsWith('+') ? text.slice(1) : text;
  const part = /(\d+(?:\.\d+)?)(ms|us|µs|μs|ns|s|m|h|d)/g;
  let total = 0;
  let consumed = 0;
  for (const match of body.matchAll(part)) {
    if (match.index !== consumed) break;
    consumed += match[0].length;
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
  }
  if (consumed === 0 || consumed !== body.length) {
    throw new Error(`keep_alive must be a duration such as "5m", "30s", "1h30m", a number of seconds, 0 or -1; got ${JSON.stringify(value)}`);
  }
  // `-0s` is 0 in Go, so unload at once as Ollama does; only a duration below zero is never.
  return negative && total > 0 ? null : finiteMs(total);
}

/** Longer than any timer or clock can count (1e308 s, `99999999999h`): never, which it means, not Infinity shown as "Infinityh". */
function finiteMs(ms: number): number | null {
  const rounded = Math.round(ms);
  return Number.isSafeInteger(rounded) ? rounded : null;
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A keep-alive as people read it: `never`, `0s`, `5m`, `1h30m`. */
export function keepAliveText(ms: number | null): string {
  if (ms === null) return 'never';
  if (ms < 1000) return `${ms}ms`;
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

/**
 * A memory size: bytes (`21474836480`), or a number with a unit (`20GiB`, `512MiB`,
 * `20G`, `1.5TB`; K/M/G/T are powers of 1024 as in `docker --memory`, KB/MB/GB/TB
 * powers of 1000). Throws an Error naming `what`.
 */
export function parseSize(value: string, what: string): number {
  // A unit is K/M/G/T with an optional `iB` or `B`, or `B` alone: `8iB` (a typo) was 8 bytes.
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(ib|b)?|(b))?\s*$/i.exec(value);
  if (!match) throw new Error(`${what} must be bytes or a size such as 20GiB or 512MiB, got ${JSON.stringify(value)}`);
  const [, number, prefix, suffix] = match;
  // A fraction of a byte is no size anyone means: `1.5` was taken as 2 bytes.
  if (!prefix && number!.includes('.')) throw new Error(`${what} must be a whole number of bytes or have a unit (1.5GiB), got ${JSON.stringify(value)}`);
  const power = ' kmgt'.indexOf((prefix || ' ').toLowerCase());
  const base = prefix && suffix?.toLowerCase() === 'b' ? 1000 : 1024;
  const bytes = Math.round(Number(number) * base ** power);
  if (bytes <= 0) throw new Error(`${what} must be more than 0 bytes, got ${JSON.stringify(value)}`);
  if (!Number.isSafeInteger(bytes)) throw new Error(`${what} is past any memory there is (at most 8 PiB), got ${JSON.stringify(value)}`);
  return bytes;
}
