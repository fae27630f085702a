import { randomUUID } from 'node:crypto';
import type { ImageFetchSettings } from '../../config/image-fetch.js';
import { HangarError } from '../../errors/hangar-error.js';
import type { CallTarget, Supervisor } from '../../supervisor/supervisor.js';
import { asGeneration, stopReasonOf, toGenerateConfig, withLogprobs } from '../llm/generate-config.js';
import { checkLoraName } from '../llm/lora-model-id.js';
import { CHAT_RULES, checkParameters } from '../llm/parameter-support.js';
import { hasImageParts, resolveImageParts } from '../images-in-chat/image-parts.js';
import { chatEnding } from './chat-ending.js';
import type { ChatBody } from './schema.js';

const ROUTE = '/v1/chat/completions';

export interface ChatCall {
  target: CallTarget;
  args: unknown[];
  kwargs: Record<string, unknown>;
}

/**
 * prepareChat, then every http(s) image of the messages fetched into a data: URL
 * (images-in-chat/): what the chat routes call.
 */
export async function prepareChatWithImages(supervisor: Supervisor, body: ChatBody, images: ImageFetchSettings, signal?: AbortSignal): Promise<ChatCall> {
  const call = prepareChat(supervisor, body);
  return { ...call, args: [await resolveImageParts(body.messages, images, signal)] };
}

/** Checks the model can chat (and call tools, see images, if asked) and builds the runtime call. */
export function prepareChat(supervisor: Supervisor, body: ChatBody): ChatCall {
  const target: CallTarget = { uid: body.model, route: ROUTE, types: ['LLM'] };
  const instance = supervisor.require(body.model);
  checkParameters(body, CHAT_RULES, instance.resolved.engine, body.model);
  checkLoraName(instance, body.lora_name);
  const abilities = instance.abilities;
  if (instance.resolved.modelType === 'LLM' && instance.state === 'READY') {
    if (!abilities.includes('chat')) throw new HangarError('ability_missing', [body.model, 'chat', abilities.join(', ')], { param: 'model' });
    if (body.tools && body.tools.length > 0 && !abilities.includes('tools')) {
      throw new HangarError('ability_missing', [body.model, 'tool calls', abilities.join(', ')], { param: 'tools' });
    }
    if (!abilities.includes('vision') && hasImageParts(body.messages)) {
      throw new HangarError('ability_missing', [body.model, 'images (image_url parts; launch a model with the vision ability)', abilities.join(', ')], { param: 'messages' });
    }
  }
  checkForcedTool(body);
  const templateKwargs = { ...(body.chat_template_kwargs ?? {}) };
  if (body.enable_thinking !== null && body.enable_thinking !== undefined) templateKwargs.enable_thinking = body.enable_thinking;
  // Launched with `enable_thinking` (Xinference's launch flag): the model's default, which a request may still set.
  const launchThinking = instance.request.engine_kwargs.enable_thinking;
  if (typeof launchThinking === 'boolean' && templateKwargs.enable_thinking === undefined) templateKwargs.enable_thinking = launchThinking;
  const generateConfig = withLogprobs(toGenerateConfig(body, body.max_completion_tokens ?? body.max_tokens), body.logprobs ? (body.top_logprobs ?? 0) : null);
  if (body.response_format && body.response_format.type !== 'text') generateConfig.response_format = body.response_format;
  const kwargs: Record<string, unknown> = {
    generate_config: generateConfig,
    chat_template_kwargs: templateKwargs,
    ...chatEnding(body),
  };
  if (kwargs.continue_final_message === true) refuseHeldContinuation(body);
  if (body.tools && body.tools.length > 0) {
    kwargs.tools = body.tools;
    if (body.tool_choice) kwargs.tool_choice = body.tool_choice;
  }
  return { target, args: [body.messages], kwargs };
}

/**
 * A continued final message cannot be held to a shape that starts an answer of its own:
 * a JSON schema or object, a grammar, or a forced tool call (llama.cpp's grammar began a
 * new object after the prefill's `{"city": "Par`, and the two made no JSON).
 */
function refuseHeldContinuation(body: ChatBody): void {
  const held = body.response_format && body.response_format.type !== 'text' ? `response_format ${body.response_format.type}`
    : typeof (body as Record<string, unknown>).grammar === 'string' && (body as Record<string, unknown>).grammar !== '' ? 'a grammar'
      : body.tool_choice && body.tool_choice !== 'auto' && body.tool_choice !== 'none' ? 'a forced tool_choice' : null;
  if (held) {
    throw new HangarError('invalid_field', [`continue_final_message: a continued message cannot be held to ${held}, which shapes a whole answer from its start; send one of the two`], { param: 'continue_final_message' });
  }
}

/**
 * A forced tool call ("required", or a named function) needs the tool among the request's
 * tools, as OpenAI's and vLLM's servers say; checked here so every engine refuses alike
 * (one would answer text as if nothing was asked).
 */
function checkForcedTool(body: ChatBody): void {
  const choice = body.tool_choice;
  if (choice === undefined || choice === null || choice === 'auto' || choice === 'none') return;
  const names = (body.tools ?? []).map((t) => t.function.name);
  if (names.length === 0) {
    throw new HangarError('invalid_field', [`tool_choice: ${choice === 'required' ? '"required"' : 'a named function'} forces a tool call, but the request has no tools`], { param: 'tool_choice' });
  }
  if (choice === 'required') return;
  const name = (choice as { function?: { name?: unknown } }).function?.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new HangarError('invalid_field', ['tool_choice.function.name: is required: the function to call'], { param: 'tool_choice.function.name' });
  }
  if (!names.includes(name)) {
    throw new HangarError('invalid_field', [`tool_choice: names ${JSON.stringify(name)}, which is not among the tools (${names.join(', ')})`], { param: 'tool_choice' });
  }
}

interface Envelope {
  id: string;
  created: number;
  model: string;
}

function envelope(model: string): Envelope {
  return { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model };
}

/** The non-stream answer (OpenAI `chat.completion`). */
export function chatCompletion(model: string, value: unknown): Record<string, unknown> {
  const g = asGeneration(value);
  const message: Record<string, unknown> = { role: 'assistant', content: g.tool_calls?.length && !g.text ? null : g.text };
  if (g.reasoning_content) message.reasoning_content = g.reasoning_content;
  if (g.tool_calls?.length) message.tool_calls = g.tool_calls;
  return {
    ...envelope(model),
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: g.finish_reason ?? 'stop', stop_reason: stopReasonOf(g), logprobs: g.logprobs?.length ? { content: g.logprobs } : null }],
    usage: g.usage ?? null,
  };
}
