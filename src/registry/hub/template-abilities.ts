import { toolParserIsParsed } from '../tool-parsers.js';

/** What a chat template shows of a model's abilities (docs/registry.md, "Launch by hub id"). */
export interface TemplateAbilities {
  /** The tool-call format the template teaches the model; null when none known is seen. */
  tool_parser: string | null;
  /** The template takes `tools` and its format is one the engines parse. */
  tools: boolean;
  reasoning: { start: string; end: string } | null;
  /** Thinking can be switched per request (`enable_thinking`, Qwen3's and others' switch). */
  hybrid: boolean;
}

/**
 * Markers of each tool-call format in the templates that teach it, as their model
 * cards' templates write them; the first that matches wins (DeepSeek's and harmony's
 * markers are unique, Hermes' `<tool_call>` also appears in templates of other
 * formats' documentation, so it comes after them).
 */
const TOOL_FORMATS: ReadonlyArray<[string, RegExp]> = [
  ['gpt-oss', /<\|channel\|>[\s\S]*<\|call\|>|<\|call\|>[\s\S]*<\|channel\|>/],
  ['deepseek-v3', /tool▁calls▁begin|tool▁call▁begin/],
  // Two that also write <tool_call>, with XML inside rather than JSON (llama.cpp's
  // common/chat.cpp tells them apart the same way): Qwen3-Coder's and GLM-4.5's.
  ['qwen3_coder', /<function=[\s\S]*<parameter=/],
  ['glm4', /<arg_key>/],
  ['mistral', /\[TOOL_CALLS\]/],
  ['llama3', /<\|python_tag\|>|respond with a JSON for a function call|<\|start_header_id\|>ipython<\|end_header_id\|>/],
  ['qwen', /<tool_call>/],
];

export function templateAbilities(template: string | null): TemplateAbilities {
  if (!template) return { tool_parser: null, tools: false, reasoning: null, hybrid: false };
  const takesTools = /\btools\b/.test(template);
  const parser = takesTools ? (TOOL_FORMATS.find(([, marker]) => marker.test(template))?.[0] ?? null) : null;
  const thinks = template.includes('<think>') || template.includes('</think>');
  return {
    tool_parser: parser,
    tools: toolParserIsParsed(parser),
    reasoning: thinks ? { start: '<think>', end: '</think>' } : null,
    hybrid: thinks && /enable_thinking/.test(template),
  };
}
