import { HangarError } from '../../errors/hangar-error.js';
import type { ChatOrigins } from '../llm/param-origins.js';
import type { ContentBlock, MessagesBody } from './schema.js';
import { checkToolPairing } from './tool-pairing.js';

/**
 * An Anthropic Messages request as the OpenAI chat request the engines already serve
 * (docs/anthropic.md, "Mapping"): system first, text parts joined, images as
 * `image_url` parts, `tool_use` blocks as the assistant's `tool_calls`, `tool_result`
 * blocks as `tool` messages, tools and tool_choice in OpenAI's spelling. Tool turns
 * that do not pair up are refused first (tool-pairing.ts).
 */
export function toChatRequest(body: MessagesBody, origins: ChatOrigins = []): Record<string, unknown> {
  checkToolPairing(body.messages);
  const messages: Array<Record<string, unknown>> = [];
  if (body.system !== undefined) {
    const system = typeof body.system === 'string' ? body.system : joinTexts(body.system);
    if (system) messages.push({ role: 'system', content: system }), origins.push({ path: 'system' });
  }
  body.messages.forEach((message, i) => {
    const blocks: ContentBlock[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (message.role === 'assistant') messages.push(assistantMessage(blocks, i)), origins.push({ path: `messages.${i}` });
    else messages.push(...userMessages(blocks, i, origins));
  });
  // An empty final assistant message is no prefill: the answer starts its own turn, as
  // with none (it was rendered as an empty turn, and the answer began another).
  const last = messages.at(-1);
  if (body.messages.at(-1)?.role === 'assistant' && last?.content === '' && last.tool_calls === undefined && body.messages.length > 1) {
    messages.pop();
    origins.pop();
  }
  const chat: Record<string, unknown> = { model: body.model, messages, max_tokens: body.max_tokens, ...prefill(body, messages.at(-1)!, origins.at(-1)?.path) };
  if (body.stop_sequences?.length) chat.stop = body.stop_sequences;
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.top_p !== undefined) chat.top_p = body.top_p;
  if (body.top_k !== undefined && body.top_k > 0) chat.top_k = body.top_k;
  if (body.tools?.length) {
    chat.tools = body.tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema } }));
  }
  if (body.tool_choice) chat.tool_choice = toolChoice(body.tool_choice);
  if (body.thinking) chat.enable_thinking = body.thinking.type === 'enabled';
  if (body.lora_name) chat.lora_name = body.lora_name;
  const format = body.output_config?.format;
  if (format) chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  return chat;
}

/**
 * A conversation that ends with the assistant's text is Anthropic's prefill: the answer
 * continues that text (continue_final_message), and holds only what follows it.
 * Anthropic refuses a prefill that ends in whitespace (a model continues a word, not a
 * space); so does this, in its words. A final assistant turn of tool calls is no prefill.
 */
function prefill(body: MessagesBody, last: Record<string, unknown>, origin: string | undefined): Record<string, unknown> {
  // The chat's own last message (an empty final assistant message was left out).
  if (last.role !== 'assistant' || last.tool_calls !== undefined || last.content === '') return {};
  // The continued message's own place (an empty one after it was left out).
  const param = `${origin ?? `messages.${body.messages.length - 1}`}.content`;
  if (/\s$/.test(String(last.content))) {
    throw new HangarError('invalid_field', ['messages: final assistant content cannot end with trailing whitespace'], { param });
  }
  // Anthropic: "Prefilling is only available for non-extended thinking modes". A model
  // made to think first would open its thinking after the prefill's text.
  if (body.thinking?.type === 'enabled') {
    throw new HangarError('invalid_field', ['messages: a final assistant message (a prefill) cannot be continued with `thinking` enabled, as Anthropic refuses it; disable `thinking` or end with a user message'], { param });
  }
  // A shape held from the answer's start cannot continue a prefill (see chat's refuseHeldContinuation).
  const forced = body.tool_choice && (body.tool_choice.type === 'any' || body.tool_choice.type === 'tool');
  if (body.output_config?.format || forced) {
    throw new HangarError('invalid_field', [`messages: a final assistant message (a prefill) cannot be continued with ${forced ? 'a forced tool_choice' : 'output_config.format'}, which shapes the whole answer; send one of the two`], { param });
  }
  return { continue_final_message: true, add_generation_prompt: false };
}

/**
 * Claude Code sends a first system block `x-anthropic-billing-header: cc_version=...`:
 * metadata for Anthropic's billing, not an instruction, and different from one version
 * to the next (which would also defeat a prompt cache). Xinference drops it; so does this.
 */
const BILLING_HEADER = 'x-anthropic-billing-header';

/** Text blocks as one text: each block on its own line, as Xinference joins them; the billing header left out. */
function joinTexts(blocks: ReadonlyArray<{ type: string; text?: unknown }>): string {
  return blocks
    .filter((b): b is { type: 'text'; text: string } => b.type === 'text' && typeof b.text === 'string' && !b.text.startsWith(BILLING_HEADER))
    .map((b) => b.text)
    .join('\n');
}

function assistantMessage(blocks: ContentBlock[], i: number): Record<string, unknown> {
  // An image the model said is no turn a chat template renders: it was dropped without a word.
  const image = blocks.findIndex((b) => b.type === 'image');
  if (image !== -1) throw new HangarError('invalid_field', [`messages.${i}.content.${image}: image blocks are taken in user messages only`], { param: `messages.${i}.content.${image}` });
  const text = joinTexts(blocks);
  const calls = blocks
    .filter((b): b is Extract<ContentBlock, { type: 'tool_use' }> => b.type === 'tool_use')
    .map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
  return { role: 'assistant', content: text, ...(calls.length ? { tool_calls: calls } : {}) };
}

/**
 * A user turn: its tool results first (each a `tool` message, as OpenAI orders them),
 * then its text and images. A tool result's images (a screenshot, a file read) cannot
 * ride in a `tool` message, which takes text only: they join the turn's user message,
 * after the tool messages, so a vision model sees them and any other model refuses
 * them by name, as it refuses any image; they are never dropped.
 */
function userMessages(blocks: ContentBlock[], index: number, origins: ChatOrigins): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const parts: Array<Record<string, unknown>> = [];
  // Where each of `parts` came from, for errors (param-origins.ts).
  const partPaths: string[] = [];
  blocks.forEach((block, b) => {
    const at = `messages.${index}.content.${b}`;
    if (block.type === 'tool_result') {
      const content = block.content === undefined ? '' : typeof block.content === 'string' ? block.content : joinTexts(block.content);
      out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${content}` : content });
      origins.push({ path: at });
      if (Array.isArray(block.content)) {
        block.content.forEach((inner, c) => {
          if (inner.type === 'image') parts.push(imagePart(inner)), partPaths.push(`${at}.content.${c}`);
        });
      }
    } else if (block.type === 'text') {
      const text = (block as { text: string }).text;
      if (!text.startsWith(BILLING_HEADER)) parts.push({ type: 'text', text }), partPaths.push(at);
    } else if (block.type === 'image') {
      parts.push(imagePart(block)), partPaths.push(at);
    } else if (block.type === 'tool_use') {
      throw new HangarError('invalid_field', [`messages.${index}.content: tool_use blocks belong to assistant messages`], { param: `messages.${index}.content` });
    }
  });
  if (parts.length > 0) {
    const onlyText = parts.every((p) => p.type === 'text');
    out.push({ role: 'user', content: onlyText ? parts.map((p) => p.text).join('\n') : parts });
    origins.push({ path: `messages.${index}`, parts: partPaths });
  }
  return out;
}

function imagePart(block: unknown): Record<string, unknown> {
  const source = (block as { source: { type: string; media_type?: string; data?: string; url?: string } }).source;
  return { type: 'image_url', image_url: { url: source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url } };
}

function toolChoice(choice: NonNullable<MessagesBody['tool_choice']>): unknown {
  // Chat's `parallel_tool_calls: false` is refused the same way: nothing here keeps a
  // model to one call, and dropping the others without a word would lose them. A named
  // tool is one call already (the engines that force a call make exactly one).
  if ((choice as { disable_parallel_tool_use?: unknown }).disable_parallel_tool_use === true && choice.type !== 'tool') {
    throw new HangarError('invalid_field', ['tool_choice.disable_parallel_tool_use: is not supported: every tool call the model makes is returned (leave it out or false)'], { param: 'tool_choice.disable_parallel_tool_use' });
  }
  if (choice.type === 'tool') return { type: 'function', function: { name: (choice as { name: string }).name } };
  return { auto: 'auto', any: 'required', none: 'none' }[choice.type];
}
