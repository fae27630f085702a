import { splitHeld } from './holdback.js';
import { callFromValue, jsonSequence, makeCall, DEEPSEEK_CALL, DEEPSEEK_CALLS, MISTRAL_CALLS, parseDeepseek, parseMistral, type ToolCall } from './tool-call-markup.js';

export type { ToolCall } from './tool-call-markup.js';

/**
 * Tool calls in a model's text, turned into OpenAI `tool_calls` (the Python
 * runtime's tool_calls.py, the same formats):
 * - "hermes" (Qwen, Hermes and most open templates): `<tool_call>{"name", "arguments"}</tool_call>` blocks;
 * - "json" (Llama 3.x): the whole reply is one JSON object `{"name", "parameters"}` or a list of them;
 * - "mistral": `[TOOL_CALLS]` and what follows it, in either of Mistral's forms;
 * - "deepseek": DeepSeek V3/R1/V3.1's `<｜tool▁call▁begin｜>` blocks (tool-call-markup.ts).
 * From where a tool call may begin the text is held back; at the end it becomes
 * tool_calls, or plain text after all if it does not parse.
 */
export type ToolFormat = 'hermes' | 'json' | 'mistral' | 'deepseek' | 'harmony';

/** The formats whose calls open with a marker; the held text goes to their parser at the end. */
const MARKED: Record<Exclude<ToolFormat, 'json' | 'harmony'>, { opens: string[]; parse: (text: string) => [string, ToolCall[]] }> = {
  hermes: { opens: ['<tool_call>'], parse: parseHermes },
  mistral: { opens: [MISTRAL_CALLS], parse: parseMistral },
  deepseek: { opens: [DEEPSEEK_CALLS, DEEPSEEK_CALL], parse: parseDeepseek },
};

/**
 * The special tokens a format's markup is made of: detokenizers drop special tokens, so
 * these are kept (llama-server's `preserved_tokens`, the Transformers detokenizer's keep list).
 */
export const PRESERVED_TOKENS: Record<ToolFormat, string[]> = {
  hermes: [],
  json: ['<|python_tag|>'],
  mistral: ['[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', '[THINK]', '[/THINK]'],
  deepseek: ['<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>', '<｜tool▁call▁begin｜>', '<｜tool▁call▁end｜>', '<｜tool▁sep｜>'],
  // gpt-oss: a reply is harmony messages, read by harmony.ts rather than ToolCallText.
  harmony: ['<|start|>', '<|channel|>', '<|message|>', '<|end|>', '<|constrain|>'],
};

// Llama 3.1's marker before a call (a special token, kept by PRESERVED_TOKENS).
const PYTHON_TAG = '<|python_tag|>';
const HERMES_BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const HERMES_UNCLOSED = /<tool_call>((?:(?!<tool_call>)[\s\S])*)$/;

/** Without a known tool_parser: Llama 3.x families call tools in bare JSON, every other family in Hermes blocks. */
export function toolCallFormat(toolParser: string | null, modelFamily: string | null): ToolFormat {
  if (toolParser === 'llama3') return 'json';
  if (toolParser === 'mistral') return 'mistral';
  if (toolParser === 'gpt-oss') return 'harmony';
  if (toolParser === 'qwen' || toolParser === 'hermes') return 'hermes';
  if (toolParser !== null && /^deepseek[-_](v3|r1)/.test(toolParser) && toolParser !== 'deepseek-v3.2') return 'deepseek';
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
  for (const marker of [MISTRAL_CALLS, PYTHON_TAG]) if (body.startsWith(marker)) body = body.slice(marker.length).trimStart();
  if (!body.startsWith('{') && !body.startsWith('[')) return [text, []];
  const values = jsonSequence(body);
  if (values === null) return [text, []];
  const calls = values.flatMap((value) => (Array.isArray(value) ? value : [value])).map(callFromValue);
  if (calls.length === 0 || calls.some((c) => c === null)) return [text, []];
  return ['', calls as ToolCall[]];
}

/** Passes text through until a tool call may have begun, then holds the rest until finish() says what it was. */
export class ToolCallText {
  private readonly json: boolean;
  private readonly marked: (typeof MARKED)[keyof typeof MARKED] | null;
  private held = '';
  private holding = false;
  private seenText = false; // json: a reply that does not open with JSON is plain text
  /** A forced call cut short (the token limit): what came is returned as a partial call. */
  truncated = false;

  /**
   * `forced`: the reply is a call the grammar forces (`tool_choice` "required" or a named
   * function), never text: its JSON wrapper must not reach the client as content when
   * the limit cuts it, as it did ("{\"name\": \"get_weather\",\n\t\"").
   */
  constructor(format: ToolFormat, private readonly forced = false) {
    this.json = format === 'json';
    if (format === 'harmony') throw new Error('harmony replies are read by HarmonyText');
    this.marked = format === 'json' ? null : MARKED[format];
  }

  feed(piece: string): string {
    if (this.holding) {
      this.held += piece;
      return '';
    }
    const text = this.held + piece;
    this.held = '';
    return this.json ? this.feedJson(text) : this.feedMarked(text);
  }

  /** [text still to hand out, tool_calls]. */
  finish(): [string, ToolCall[]] {
    const held = this.held;
    this.held = '';
    if (!this.holding) return [this.forced ? '' : held, []];
    const [text, calls] = this.json ? parseJsonCalls(held) : this.marked!.parse(held);
    if (!this.forced || calls.length > 0) return [text, calls];
    this.truncated = true;
    return ['', partialCall(held)];
  }

  private feedMarked(text: string): string {
    const { opens } = this.marked!;
    const found = opens.map((o) => text.indexOf(o)).filter((i) => i >= 0);
    if (found.length > 0) {
      const start = Math.min(...found);
      this.holding = true;
      this.held = text.slice(start);
      return text.slice(0, start);
    }
    let safe: string;
    [safe, this.held] = splitHeld(text, opens);
    return safe;
  }

  private feedJson(text: string): string {
    if (this.seenText) return text;
    const stripped = text.trimStart();
    if (!stripped) {
      this.held = text; // only whitespace so far: the JSON may still come
      return '';
    }
    if (stripped.startsWith('{') || stripped.startsWith('[') || stripped.startsWith(PYTHON_TAG)) {
      this.holding = true;
      this.held = text;
      return '';
    }
    if (PYTHON_TAG.startsWith(stripped)) {
      this.held = text; // the marker may be arriving in pieces
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

/**
 * A forced call's JSON cut short, as OpenAI answers one at the token limit: the call
 * with the arguments written so far, once its name is whole; nothing before that.
 */
function partialCall(held: string): ToolCall[] {
  const name = /^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)+)"/.exec(held);
  if (!name) return [];
  let decoded: unknown;
  try {
    decoded = JSON.parse(`"${name[1]}"`);
  } catch {
    return [];
  }
  const args = /"(?:arguments|parameters)"\s*:\s*([\s\S]*)$/.exec(held.slice(name.index + name[0].length));
  return [makeCall(String(decoded), args ? args[1]!.trimEnd() : '')];
}
