import { randomBytes } from 'node:crypto';
import { splitHeld } from './holdback.js';

/**
 * Tool calls in a model's text, turned into OpenAI `tool_calls` (the Python
 * runtime's tool_calls.py, the same two formats):
 * - "hermes" (Qwen, Hermes and most open templates): `<tool_call>{"name", "arguments"}</tool_call>` blocks;
 * - "json" (Llama 3.1, Mistral): the whole reply is one JSON object `{"name", "parameters"}` or a list of them.
 * From where a tool call may begin the text is held back; at the end it becomes
 * tool_calls, or plain text after all if it does not parse.
 */
export type ToolFormat = 'hermes' | 'json';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

const HERMES_OPEN = '<tool_call>';
const HERMES_BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const HERMES_UNCLOSED = /<tool_call>((?:(?!<tool_call>)[\s\S])*)$/;
const MISTRAL_MARKER = '[TOOL_CALLS]';

/** Without a known tool_parser: Llama 3.x families call tools in bare JSON, every other family in Hermes blocks. */
export function toolCallFormat(toolParser: string | null, modelFamily: string | null): ToolFormat {
  if (toolParser === 'llama3' || toolParser === 'mistral') return 'json';
  if (toolParser === 'qwen' || toolParser === 'hermes') return 'hermes';
  return modelFamily?.toLowerCase().includes('llama-3') ? 'json' : 'hermes';
}

export function parseHermes(text: string): [string, ToolCall[]] {
  const calls: ToolCall[] = [];
  const take = (whole: string, body: string): string => {
    const call = callFromJson(body);
    if (!call) return whole;
    calls.push(call);
    return '';
  };
  let rest = text.replace(HERMES_BLOCK, take);
  // A model stopped by its end token right after the JSON may never close the block.
  rest = rest.replace(HERMES_UNCLOSED, take);
  return [calls.length > 0 ? rest.trim() : rest, calls];
}

export function parseJsonCalls(text: string): [string, ToolCall[]] {
  let body = text.trim();
  if (body.startsWith(MISTRAL_MARKER)) body = body.slice(MISTRAL_MARKER.length).trimStart();
  if (!body.startsWith('{') && !body.startsWith('[')) return [text, []];
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return [text, []];
  }
  const calls = (Array.isArray(value) ? value : [value]).map(callFromValue);
  if (calls.length === 0 || calls.some((c) => c === null)) return [text, []];
  return ['', calls as ToolCall[]];
}

/** Passes text through until a tool call may have begun, then holds the rest until finish() says what it was. */
export class ToolCallText {
  private readonly json: boolean;
  private held = '';
  private holding = false;
  private seenText = false; // json: a reply that does not open with JSON is plain text

  constructor(format: ToolFormat) {
    this.json = format === 'json';
  }

  feed(piece: string): string {
    if (this.holding) {
      this.held += piece;
      return '';
    }
    const text = this.held + piece;
    this.held = '';
    return this.json ? this.feedJson(text) : this.feedHermes(text);
  }

  /** [text still to hand out, tool_calls]. */
  finish(): [string, ToolCall[]] {
    const held = this.held;
    this.held = '';
    if (!this.holding) return [held, []];
    return this.json ? parseJsonCalls(held) : parseHermes(held);
  }

  private feedHermes(text: string): string {
    const start = text.indexOf(HERMES_OPEN);
    if (start >= 0) {
      this.holding = true;
      this.held = text.slice(start);
      return text.slice(0, start);
    }
    let safe: string;
    [safe, this.held] = splitHeld(text, [HERMES_OPEN]);
    return safe;
  }

  private feedJson(text: string): string {
    if (this.seenText) return text;
    const stripped = text.trimStart();
    if (!stripped) {
      this.held = text; // only whitespace so far: the JSON may still come
      return '';
    }
    if (stripped.startsWith('{') || stripped.startsWith('[')) {
      this.holding = true;
      this.held = text;
      return '';
    }
    this.seenText = true;
    return text;
  }
}

function callFromJson(raw: string): ToolCall | null {
  try {
    return callFromValue(JSON.parse(raw.trim()));
  } catch {
    return null;
  }
}

function callFromValue(value: unknown): ToolCall | null {
  const v = value as { name?: unknown; arguments?: unknown; parameters?: unknown } | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof v.name !== 'string' || !v.name) return null;
  const args = v.arguments ?? v.parameters ?? {};
  return {
    id: `call_${randomBytes(12).toString('hex')}`,
    type: 'function',
    function: { name: v.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
  };
}
