import { HangarError } from '../../errors/hangar-error.js';
import { CHAT_RULES, SHARED_RULES } from '../llm/parameter-support.js';
import { samplingShape } from '../llm/generate-config.js';
import { checked } from './input-items.js';
import { functionToolSchema, type ResponsesBody } from './schema.js';

/**
 * The Responses fields an engine may not do whose chat name differs, checked under
 * the Responses name so a refusal names the field the client sent (`text.format`, not
 * chat's `response_format`). The rule is chat's; every other field keeps its chat name
 * (`tool_choice`, `parallel_tool_calls`) and is checked on the mapped chat request.
 */
export const RESPONSES_RULES = { 'text.format': CHAT_RULES.response_format!, 'text.verbosity': CHAT_RULES.verbosity! };

const unsupported = (param: string, why: string): HangarError => new HangarError('field_unsupported', [param, why], { param });

/**
 * Chat's names for what the Responses API spells otherwise. OpenAI answers them
 * "Unknown parameter"; here they are refused with the name to use, since a client
 * moving from chat would otherwise get an answer made without them.
 */
const CHAT_NAMES: Record<string, string> = {
  messages: 'the conversation is `input` (and `instructions` for the system message)',
  max_tokens: 'the Responses API calls it `max_output_tokens`',
  max_completion_tokens: 'the Responses API calls it `max_output_tokens`',
  response_format: 'the Responses API calls it `text.format` ({"text": {"format": {"type": "json_schema", "name": ..., "schema": ...}}})',
  logprobs: 'ask with `top_logprobs` or `include: ["message.output_text.logprobs"]`',
  reasoning_effort: 'the Responses API calls it `reasoning.effort`',
  functions: 'use `tools` ({"type": "function", "name": ..., "parameters": ...})',
  function_call: 'use `tool_choice`',
};

// Fields of the Responses API itself (schema.ts) or mapped from it: not handed on as they are.
const OWN = new Set(['model', 'max_tokens', 'temperature', 'top_p', 'seed', 'lora_name', 'n', 'stream', 'stream_options']);

/**
 * The sampling fields chat takes beyond the Responses API's own (vLLM's extras:
 * `top_k`, `min_p`, `repetition_penalty`, penalties, `stop`, `logit_bias`, ...; vLLM's
 * Responses server takes them too). They are handed on to the chat request under the
 * same name, so they are honoured or refused as on chat, never dropped.
 */
const CHAT_EXTRAS = [...new Set([...Object.keys(samplingShape), ...Object.keys(SHARED_RULES)])].filter((f) => !OWN.has(f));

/** Fields of OpenAI's Responses API that nothing here does: each refused by name rather than ignored. */
export function refuseUnsupported(body: ResponsesBody, abilities: readonly string[]): void {
  const fields = body as Record<string, unknown>;
  for (const [name, use] of Object.entries(CHAT_NAMES)) {
    if (fields[name] !== undefined && fields[name] !== null) throw unsupported(name, `it is a chat completions field; ${use}`);
  }
  if (body.input === undefined) throw new HangarError('invalid_field', ['input: is required: the conversation, a string or a list of items'], { param: 'input' });
  // One response holds one answer: ask n times for n.
  if (fields.n !== undefined && fields.n !== null && fields.n !== 1) throw unsupported('n', 'a response holds one answer; send the request n times');
  if (fields.background === true) throw unsupported('background', 'responses are answered while the request waits (or streamed); there is no background mode');
  if (fields.conversation !== undefined && fields.conversation !== null) throw unsupported('conversation', 'there is no Conversations API here; continue with previous_response_id');
  if (fields.prompt !== undefined && fields.prompt !== null) throw unsupported('prompt', 'there are no stored prompt templates here; send instructions and input');
  if (typeof fields.max_tool_calls === 'number') throw unsupported('max_tool_calls', 'built-in tools are not served here, and function calls are returned, not run');
  if (body.truncation === 'auto') throw unsupported('truncation', 'an input longer than the model\'s context is refused, not cut ("disabled")');
  body.tools?.forEach((tool, i) => {
    if (tool.type !== 'function') throw unsupported(`tools.${i}.type`, `built-in tools (${tool.type}) are not served here; only function tools, which the client runs`);
    checked(functionToolSchema, tool, `tools.${i}`);
  });
  const choice = body.tool_choice;
  if ((choice === 'required' || (choice && typeof choice === 'object')) && !body.tools?.length) {
    throw new HangarError('invalid_field', ['tool_choice: a tool can only be required or named with tools to choose from'], { param: 'tool_choice' });
  }
  if (choice && typeof choice === 'object' && choice.type !== 'function') throw unsupported('tool_choice.type', `only "none", "auto", "required" or a function ({"type": "function", "name": ...}) can be chosen, not ${choice.type}`);
  if (choice && typeof choice === 'object' && !choice.name) throw new HangarError('invalid_field', ['tool_choice.name: a function tool_choice needs the name of the function'], { param: 'tool_choice.name' });
  const effort = body.reasoning?.effort;
  // `none` asks for no reasoning, which a model that does not reason already does.
  if (effort && effort !== 'none' && !abilities.includes('reasoning')) throw unsupported('reasoning', `model ${body.model} does not reason (its abilities: ${abilities.join(', ')})`);
}

/** The Responses request as the chat request the engines serve (docs/responses.md, "Mapping"). */
export function toChatRequest(body: ResponsesBody, messages: Array<Record<string, unknown>>): Record<string, unknown> {
  const chat: Record<string, unknown> = { model: body.model, messages };
  const copy = (to: string, value: unknown): void => {
    if (value !== undefined && value !== null) chat[to] = value;
  };
  copy('max_tokens', body.max_output_tokens);
  copy('temperature', body.temperature);
  copy('top_p', body.top_p);
  copy('seed', body.seed);
  copy('lora_name', body.lora_name);
  copy('parallel_tool_calls', body.parallel_tool_calls);
  copy('chat_template_kwargs', body.chat_template_kwargs);
  // Checked as chat checks it (a tier other than auto/default is refused): it was
  // dropped, and the response echoed a tier no one served. `text.verbosity`: RESPONSES_RULES.
  copy('service_tier', (body as Record<string, unknown>).service_tier);
  for (const field of CHAT_EXTRAS) copy(field, (body as Record<string, unknown>)[field]);
  if (typeof body.top_logprobs === 'number') (chat.logprobs = true), (chat.top_logprobs = body.top_logprobs);
  else if (body.include?.includes('message.output_text.logprobs')) chat.logprobs = true;
  const format = body.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    const { name, schema, strict, description } = format as { name: string; schema: unknown; strict?: boolean | null; description?: string | null };
    chat.response_format = { type: 'json_schema', json_schema: { name, schema, ...(strict != null ? { strict } : {}), ...(description ? { description } : {}) } };
  }
  const tools = body.tools ?? [];
  if (tools.length > 0) {
    chat.tools = tools.map((t) => {
      const { name, description, parameters, strict } = t as unknown as { name: string; description?: string | null; parameters?: unknown; strict?: boolean | null };
      return { type: 'function', function: { name, ...(description ? { description } : {}), parameters: parameters ?? { type: 'object', properties: {} }, ...(strict != null ? { strict } : {}) } };
    });
    const choice = body.tool_choice;
    if (typeof choice === 'string') chat.tool_choice = choice;
    else if (choice) chat.tool_choice = { type: 'function', function: { name: choice.name } };
  }
  const effort = body.reasoning?.effort;
  if (effort) chat.enable_thinking = effort !== 'none' && effort !== 'minimal';
  return chat;
}
