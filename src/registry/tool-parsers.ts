/**
 * The `tool_parser` names whose output the engines turn into OpenAI `tool_calls`
 * (python-runtime's tool_calls.py, src/llama-runtime/engine/tool-calls.ts), and the
 * format each reads. A model may claim `tools` with one of these even when its family
 * is not a built-in one: a registration from the hub, whose template shows the format
 * (docs/registry.md, "Tool parsers").
 */
export const PARSED_TOOL_FORMATS: Readonly<Record<string, 'hermes' | 'json' | 'mistral' | 'deepseek' | 'harmony'>> = {
  qwen: 'hermes',
  hermes: 'hermes',
  llama3: 'json',
  mistral: 'mistral',
  // Xinference spells DeepSeek's parsers several ways; V3, R1 and V3.1 share the markup (V3.2's DSML is not read).
  'deepseek-v3': 'deepseek',
  deepseek_v3: 'deepseek',
  'deepseek-v3.1': 'deepseek',
  'deepseek-r1': 'deepseek',
  // gpt-oss's harmony channels: reasoning, answer and calls in one.
  'gpt-oss': 'harmony',
};

export function toolParserIsParsed(name: string | null | undefined): boolean {
  return typeof name === 'string' && Object.hasOwn(PARSED_TOOL_FORMATS, name);
}
