import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ReasoningSplitter } from '../../src/llama-runtime/engine/reasoning.js';
import { HarmonyText } from '../../src/llama-runtime/engine/harmony.js';
import { ToolCallText, type ToolCall, type ToolFormat } from '../../src/llama-runtime/engine/tool-calls.js';

/**
 * Each tool-call format on model outputs recorded by others (test/fixtures/tool-call-outputs.json:
 * vLLM's, SGLang's, llama.cpp's and the model vendors' parser tests and docs, each case
 * with its source), through the llama.cpp runtime's reasoning split and tool-call filter,
 * whole and streamed in small pieces. python-runtime/tests/test_tool_call_outputs.py runs
 * the same cases through the Transformers engine's.
 */
interface Case {
  format: string;
  source: string;
  text: string;
  variant?: string;
  expected: { content: string | null; reasoning_content: string | null; tool_calls: Array<{ name: string; arguments: unknown }> };
}

const here = path.dirname(fileURLToPath(import.meta.url));
const cases = JSON.parse(readFileSync(path.join(here, '..', 'fixtures', 'tool-call-outputs.json'), 'utf8')) as Case[];

/** Each recorded format as the engines know it: the tool format and the family's reasoning tags. */
const FORMATS: Record<string, { tool: ToolFormat; tags: [string, string] | null }> = {
  hermes: { tool: 'hermes', tags: ['<think>', '</think>'] },
  llama3: { tool: 'json', tags: null },
  mistral: { tool: 'mistral', tags: null },
  'mistral-args': { tool: 'mistral', tags: ['[THINK]', '[/THINK]'] },
  'deepseek-v3': { tool: 'deepseek', tags: ['<think>', '</think>'] },
  'deepseek-v31': { tool: 'deepseek', tags: ['<think>', '</think>'] },
  harmony: { tool: 'harmony', tags: null },
};

/**
 * What the engines do not read, by the case's variant, and why:
 * - python-literal-args: Hermes 2 Pro's own example with Python-quoted arguments; not JSON (vLLM refuses it too);
 * - python_tag+eom: Llama's built-in tool call, `<|python_tag|>` + an object with `"type"` and `<|eom_id|>`;
 * - special-tokens-stripped: gpt-oss decoded without its special tokens (as Xinference does); the engines keep them.
 */
const UNREAD_VARIANTS = new Set(['python-literal-args', 'python_tag+eom', 'special-tokens-stripped']);
/**
 * vLLM's Llama 3 parser takes a JSON call from the middle of prose and drops the prose;
 * here a reply that does not open with the call is text (an answer that quotes JSON is
 * not a call).
 */
const UNREAD = (c: Case) => c.format === 'llama3' && c.text.startsWith('Here is the result: {');
/** The end-of-turn tokens some recorded texts still hold: the engines stop at them before any parsing. */
const END_TOKENS = /(<\|im_end\|>|<\|eot_id\|>|<\|eom_id\|>|<\|return\|>|<\|call\|>)\s*$/;

/** Text and calls of a reply fed in pieces: a harmony reply through HarmonyText, others through the reasoning split and ToolCallText. */
/** `text` cut into pieces of the given lengths, in turn: how a stream hands it over. */
function* inPieces(text: string, pieces: number[]): Generator<string> {
  for (let at = 0, i = 0; at < text.length; i++) {
    const piece = text.slice(at, at + pieces[i % pieces.length]!);
    at += piece.length;
    yield piece;
  }
}

function run(text: string, format: { tool: ToolFormat; tags: [string, string] | null }, pieces: number[]) {
  if (format.tool === 'harmony') return runHarmony(text, pieces);
  // A reply that closes the reasoning it never opened began inside it (R1's and QwQ's templates open it).
  const startsInside = format.tags !== null && !text.includes(format.tags[0]) && text.includes(format.tags[1]);
  const reasoning = format.tags ? new ReasoningSplitter(format.tags[0], format.tags[1], startsInside) : null;
  const tools = new ToolCallText(format.tool);
  let thought = '';
  let answer = '';
  for (const piece of inPieces(text, pieces)) {
    const [t, a] = reasoning ? reasoning.feed(piece) : ['', piece];
    thought += t;
    answer += tools.feed(a);
  }
  if (reasoning) {
    const [t, a] = reasoning.finish();
    thought += t;
    answer += tools.feed(a);
  }
  const [rest, calls] = tools.finish();
  return outcome(answer + rest, thought, calls);
}

function runHarmony(text: string, pieces: number[]) {
  const harmony = new HarmonyText();
  let thought = '';
  let answer = '';
  for (const piece of inPieces(text, pieces)) {
    const [t, a] = harmony.feed(piece);
    thought += t;
    answer += a;
  }
  const [t, a, calls] = harmony.finish();
  return outcome(answer + a, thought + t, calls);
}

function outcome(answer: string, thought: string, calls: ToolCall[]) {
  const orNull = (s: string) => (s.trim() === '' ? null : s.trim());
  return {
    content: orNull(answer),
    reasoning_content: orNull(thought),
    // A call id the model wrote (Mistral Nemo's) is kept; others are ours, random.
    tool_calls: calls.map((c) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) as unknown, ...(c.id.startsWith('call_') ? {} : { id: c.id }) })),
  };
}

describe('tool calls and reasoning in recorded model outputs (llama.cpp runtime)', () => {
  const readable = cases.filter((c) => FORMATS[c.format] && !UNREAD_VARIANTS.has(c.variant ?? '') && !UNREAD(c));

  it('has cases of every format the engines parse', () => {
    for (const format of Object.keys(FORMATS)) expect(readable.filter((c) => c.format === format).length, format).toBeGreaterThanOrEqual(3);
  });

  it.each(readable.map((c, i) => [`${c.format} #${i} (${c.source.split(/[@ ]/)[0]})`, c] as const))('%s', (_name, c) => {
    const text = c.text.replace(END_TOKENS, '');
    const format = FORMATS[c.format]!;
    const expected = { ...c.expected, content: c.expected.content?.trim() || null, reasoning_content: c.expected.reasoning_content?.trim() || null };
    expect(run(text, format, [text.length])).toEqual(expected);
    // Streamed: pieces of 1 to 7 characters, splitting every marker somewhere.
    expect(run(text, format, [1, 3, 7, 2, 5])).toEqual(expected);
  });
});
