import { randomBytes } from 'node:crypto';
import { HangarError } from '../../errors/hangar-error.js';
import type { z } from 'zod';
import { type ContentPart, contentPart, functionCallItem, functionCallOutputItem } from './schema.js';
import { specificIssue } from '../validation-issue.js';
import type { ChatOrigins } from '../llm/param-origins.js';

/** An input item as stored and listed (GET /v1/responses/{id}/input_items): always with an id and a type. */
export type Item = Record<string, unknown> & { id: string; type: string };

/** OpenAI's id shapes: a prefix, then 48 hex digits. */
export function itemId(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/** Finds an output item of a stored response by id (`item_reference`); null when there is none the caller may see. */
export type ItemLookup = (id: string) => Record<string, unknown> | null;

const unsupported = (param: string, why: string): HangarError => new HangarError('field_unsupported', [param, why], { param });

/**
 * A request's `input` as stored items: a string is one user message; each item gets
 * an id if it has none; an `item_reference` is replaced by the item it names. The
 * items are checked here, each refusal naming its path (`input.2.content.0.file_id`).
 */
export function normalizeInput(input: string | unknown[], lookup: ItemLookup): Item[] {
  if (typeof input === 'string') return [{ id: itemId('msg'), type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return input.map((raw, i) => normalizeItem(raw, `input.${i}`, lookup));
}

function normalizeItem(raw: unknown, path: string, lookup: ItemLookup): Item {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new HangarError('invalid_field', [`${path}: an input item must be an object`], { param: path });
  const item = raw as Record<string, unknown>;
  const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
  if (type === 'item_reference') {
    const id = item.id;
    if (typeof id !== 'string') throw new HangarError('invalid_field', [`${path}.id: an item_reference needs the id of an item`], { param: `${path}.id` });
    const found = lookup(id);
    if (!found) throw new HangarError('response_item_not_found', [id], { param: `${path}.id` });
    return found as Item;
  }
  const id = typeof item.id === 'string' && item.id.length > 0 ? item.id : null;
  switch (type) {
    case 'message':
      return { ...item, type: 'message', id: id ?? itemId('msg'), content: messageContent(item, path) };
    case 'function_call':
      checked(functionCallItem, item, path);
      return { ...item, type: 'function_call', id: id ?? itemId('fc'), status: item.status ?? 'completed' };
    case 'function_call_output':
      checked(functionCallOutputItem, item, path);
      return { ...item, type: 'function_call_output', id: id ?? itemId('fco'), status: item.status ?? 'completed' };
    // A reasoning item sent back (the SDKs do with store: false) is kept in the list;
    // the chat template is not given it (a model's earlier thinking is not re-read).
    case 'reasoning':
      return { ...item, type: 'reasoning', id: id ?? itemId('rs') };
    default:
      throw unsupported(`${path}.type`, `input items of type ${JSON.stringify(type)} are not served here; use message, function_call, function_call_output, reasoning or item_reference`);
  }
}

/** Refuses a value its schema does not take, naming the field under `path` (`input.3.call_id`, `tools.0.name`). */
export function checked(schema: z.ZodType, item: unknown, path: string): void {
  const parsed = schema.safeParse(item);
  if (parsed.success) return;
  const issue = specificIssue(parsed.error.issues[0]!);
  const where = [path, ...issue.path].join('.');
  throw new HangarError('invalid_field', [`${where}: ${issue.message}`], { param: where });
}

/** A message's content as parts (a string becomes one text part of the role's kind); parts nothing here reads are refused. */
function messageContent(item: Record<string, unknown>, path: string): ContentPart[] {
  const role = item.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') {
    throw new HangarError('invalid_field', [`${path}.role: must be user, assistant, system or developer`], { param: `${path}.role` });
  }
  const content = item.content;
  if (typeof content === 'string') return [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: content }];
  if (!Array.isArray(content)) throw new HangarError('invalid_field', [`${path}.content: must be a string or a list of content parts`], { param: `${path}.content` });
  return content.map((part, j) => {
    const at = `${path}.content.${j}`;
    checked(contentPart, part, at);
    const p = part as ContentPart;
    if (p.type === 'input_image') {
      if (p.file_id) throw unsupported(`${at}.file_id`, 'there is no Files API here; send the image as image_url (an http(s) or data: URL)');
      if (!p.image_url) throw new HangarError('invalid_field', [`${at}.image_url: an input_image needs image_url`], { param: `${at}.image_url` });
    } else if (p.type === 'input_file' || p.type === 'input_audio') {
      throw unsupported(`${at}.type`, `${p.type} parts are not read by any engine here; send text or images`);
    }
    return p;
  });
}

/**
 * The items a model sees, as the chat messages the engines serve (docs/responses.md,
 * "Mapping"): instructions first as a system message, developer messages as system,
 * consecutive function calls as one assistant message's tool_calls, each function call
 * output as a tool message. Reasoning items are left out.
 */
export function chatMessages(
  instructions: string | null | undefined,
  items: readonly Item[],
  origins: ChatOrigins = [],
  itemPath: (index: number) => string = (index) => `input.${index}`,
): Array<Record<string, unknown>> {
  const messages: Array<Record<string, unknown>> = [];
  if (instructions) messages.push({ role: 'system', content: instructions }), origins.push({ path: 'instructions' });
  items.forEach((item, i) => {
    const at = itemPath(i);
    if (item.type === 'message') {
      const role = item.role === 'developer' ? 'system' : (item.role as string);
      const parts = item.content as ContentPart[];
      messages.push({ role, content: chatContent(parts) });
      origins.push({ path: at, parts: parts.map((_, j) => (at.startsWith('input.') ? `${at}.content.${j}` : at)) });
    } else if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...((last.tool_calls as unknown[] | undefined) ?? []), call];
      else messages.push({ role: 'assistant', content: '', tool_calls: [call] }), origins.push({ path: at });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output) });
      origins.push({ path: at });
    }
  });
  return messages;
}

/** Text-only content as one string (what every chat template reads); with images, chat's parts. */
function chatContent(parts: readonly ContentPart[]): string | Array<Record<string, unknown>> {
  const chat = parts.map((p) => {
    if (p.type === 'input_image') return { type: 'image_url', image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } };
    if (p.type === 'refusal') return { type: 'text', text: p.refusal };
    return { type: 'text', text: (p as { text: string }).text };
  });
  return chat.every((p) => p.type === 'text') ? chat.map((p) => (p as { text: string }).text).join('') : chat;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) return '';
  return output.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
}
