import { randomBytes } from 'node:crypto';

/**
 * The tool-call markup of the families that write calls between special tokens
 * (docs/registry.md, "Tool parsers"), parsed once the reply is whole. Each parser
 * returns the text outside the calls and the calls; a call that does not parse leaves
 * the text as it was.
 */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export function makeCall(name: string, args: unknown): ToolCall {
  return { id: `call_${randomBytes(12).toString('hex')}`, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}

/** `{"name", "arguments"}` (or Llama's `"parameters"`) as a call; null for anything else. */
export function callFromValue(value: unknown): ToolCall | null {
  const v = value as { name?: unknown; arguments?: unknown; parameters?: unknown; id?: unknown } | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof v.name !== 'string' || !v.name) return null;
  const call = makeCall(v.name, v.arguments ?? v.parameters ?? {});
  // Mistral Nemo's calls carry their own id; the answer to the call must name it.
  if (typeof v.id === 'string' && /^[\w-]{1,64}$/.test(v.id)) call.id = v.id;
  return call;
}

/**
 * The JSON values in `body` one after another, separated by `;` or whitespace (Llama
 * 3.x writes several calls as `{...}; {...}`); null when anything else is in between.
 */
export function jsonSequence(body: string): unknown[] | null {
  const values: unknown[] = [];
  let at = 0;
  while (at < body.length) {
    while (at < body.length && /[\s;]/.test(body[at]!)) at++;
    if (at >= body.length) break;
    const end = valueEnd(body, at);
    if (end < 0) return null;
    const value = parseJson(body.slice(at, end));
    if (value === undefined) return null;
    values.push(value);
    at = end;
  }
  return values;
}

/** Where the JSON object or list starting at `start` ends (its closing bracket + 1); -1 if it does not. */
function valueEnd(text: string, start: number): number {
  const open = text[start];
  if (open !== '{' && open !== '[') return -1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

export const MISTRAL_CALLS = '[TOOL_CALLS]';
const MISTRAL_ARGS = '[ARGS]';
const MISTRAL_CALL_ID = '[CALL_ID]';

/**
 * Mistral's `[TOOL_CALLS]`, in both of its forms:
 * - tokenizers before v11 (Mistral 7B v0.3, Nemo, Small 3.0/3.1): one JSON list after
 *   the marker, `[TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]`;
 * - v11 and later (Small 3.2, Devstral, Magistral): `[TOOL_CALLS]name[ARGS]{...}` per
 *   call, v11 with `[CALL_ID]id` before `[ARGS]`.
 */
export function parseMistral(text: string): [string, ToolCall[]] {
  const start = text.indexOf(MISTRAL_CALLS);
  if (start < 0) return [text, []];
  const before = text.slice(0, start).trim();
  const parts = text.slice(start).split(MISTRAL_CALLS).slice(1).map((p) => p.trim());
  const calls: ToolCall[] = [];
  for (const part of parts) {
    if (part.startsWith('[') || part.startsWith('{')) {
      const listed = jsonCalls(part);
      if (!listed) return [text, []];
      calls.push(...listed);
      continue;
    }
    const args = part.indexOf(MISTRAL_ARGS);
    // Where [ARGS] was dropped by a detokenizer that does not keep it: the name runs up to the JSON.
    const cut = args >= 0 ? args : part.indexOf('{');
    if (cut <= 0) return [text, []];
    const head = part.slice(0, cut);
    const name = (head.includes(MISTRAL_CALL_ID) ? head.slice(0, head.indexOf(MISTRAL_CALL_ID)) : head).trim();
    const body = part.slice(args >= 0 ? cut + MISTRAL_ARGS.length : cut).trim();
    const value = parseJson(body);
    if (!name || value === undefined || typeof value !== 'object' || value === null) return [text, []];
    calls.push(makeCall(name, value));
  }
  return [before, calls];
}

export const DEEPSEEK_CALLS = '<｜tool▁calls▁begin｜>';
export const DEEPSEEK_CALL = '<｜tool▁call▁begin｜>';
const DEEPSEEK_CALLS_END = '<｜tool▁calls▁end｜>';
const DEEPSEEK_CALL_END = '<｜tool▁call▁end｜>';
const DEEPSEEK_SEP = '<｜tool▁sep｜>';

/**
 * DeepSeek V3/R1's `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>`
 * and V3.1's `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`, inside
 * `<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>` (or without that wrapper). Text before the
 * calls is the content; text after them is dropped, as the model's turn ends there.
 */
export function parseDeepseek(text: string): [string, ToolCall[]] {
  const first = [text.indexOf(DEEPSEEK_CALLS), text.indexOf(DEEPSEEK_CALL)].filter((i) => i >= 0);
  if (first.length === 0) return [text, []];
  const start = Math.min(...first);
  const before = text.slice(0, start).trim();
  const calls: ToolCall[] = [];
  for (const block of text.slice(start).split(DEEPSEEK_CALL).slice(1)) {
    const end = block.indexOf(DEEPSEEK_CALL_END);
    const inner = (end >= 0 ? block.slice(0, end) : block.split(DEEPSEEK_CALLS_END)[0]!).trim();
    const sep = inner.indexOf(DEEPSEEK_SEP);
    if (sep < 0) return [text, []];
    const head = inner.slice(0, sep).trim();
    let rest = inner.slice(sep + DEEPSEEK_SEP.length);
    let name = head;
    if (head === 'function') {
      // V3: the name on its own line, then the arguments in a ```json fence.
      const newline = rest.indexOf('\n');
      name = (newline >= 0 ? rest.slice(0, newline) : rest).trim();
      rest = newline >= 0 ? rest.slice(newline + 1) : '';
    }
    const value = parseJson(rest.trim().replace(/^```(?:json)?\s*/, '').replace(/\s*```$/, ''));
    if (!name || value === undefined || typeof value !== 'object' || value === null) return [text, []];
    calls.push(makeCall(name, value));
  }
  return [before, calls];
}

function jsonCalls(body: string): ToolCall[] | null {
  const value = parseJson(body);
  if (value === undefined) return null;
  const calls = (Array.isArray(value) ? value : [value]).map(callFromValue);
  return calls.length > 0 && calls.every((c) => c !== null) ? (calls as ToolCall[]) : null;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}
