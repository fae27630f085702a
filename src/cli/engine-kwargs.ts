import { CliError } from './cli-error.js';

/**
 * `hangar launch ... --n-ctx 512 --trust-remote-code true`: options the command does
 * not know are engine keyword arguments (Xinference's CLI does the same; names must
 * start with `--`). Dashes become underscores, and values are read the way Xinference
 * reads them: true/false, none/null, numbers, `{...}`/`[...]` as JSON, else the string.
 */
export function engineKwargs(extra: string[]): Record<string, unknown> {
  const kwargs: Record<string, unknown> = {};
  for (let i = 0; i < extra.length; i++) {
    const arg = extra[i]!;
    if (!arg.startsWith('--') || arg.length < 3) {
      throw new CliError(`unexpected argument "${arg}": extra engine arguments are given as --name value`);
    }
    const eq = arg.indexOf('=');
    let name: string;
    let raw: string;
    if (eq > 0) {
      name = arg.slice(2, eq);
      raw = arg.slice(eq + 1);
    } else {
      const next = extra[i + 1];
      if (next === undefined || next.startsWith('--')) throw new CliError(`the engine argument ${arg} needs a value (--name value)`);
      name = arg.slice(2);
      raw = next;
      i++;
    }
    kwargs[name.replace(/-/g, '_')] = parseValue(raw);
  }
  return kwargs;
}

export function parseValue(raw: string): unknown {
  const lower = raw.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (lower === 'none' || lower === 'null') return null;
  if (/^[-+]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(raw)) {
    const n = Number(raw);
    // A number JSON cannot carry as given (1e400, or an integer past 2^53 that would
    // arrive rounded) goes as the text: the server then names the field, where a
    // rounded seed would pass in silence.
    if (Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n))) return n;
  }
  // Xinference reads `{...}` and `[...]` as JSON (`--compilation_config '{"mode": 3}'`); text that is not JSON stays text.
  if (/^\s*[[{]/.test(raw)) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  }
  return raw;
}
