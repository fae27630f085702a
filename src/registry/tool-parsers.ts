/**
 * The `tool_parser` names whose output the engines turn into OpenAI `tool_calls`
 * (python-runtime's tool_calls.py, src/llama-runtime/engine/tool-calls.ts). A model
 * may claim `tools` with one of these even when its family is not a built-in one: a
 * registration from the hub, whose template shows the format (docs/registry.md).
 */
export const PARSED_TOOL_FORMATS: Readonly<Record<string, 'hermes' | 'json'>> = {
  qwen: 'hermes',
  hermes: 'hermes',
  llama3: 'json',
};

export function toolParserIsParsed(name: string | null | undefined): boolean {
  return typeof name === 'string' && Object.hasOwn(PARSED_TOOL_FORMATS, name);
}
