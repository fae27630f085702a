import { ENGINE_TABLE } from './engine-table.js';
import { engineMatchesModel } from './engine-matching.js';
import type { LlmRecord, TypedRecord } from './model-record.js';

/**
 * Summaries of the LLM catalog that Xinference's UI and clients read
 * (`/v1/models/families`, `/v1/models/prompts`, `/v1/models/vllm-supported`).
 */

/** Family names by ability: `{chat: [...], generate: [...], tools: [...], vision: [...], ...}`. */
export function familiesByAbility(records: readonly LlmRecord[]): Record<string, string[]> {
  const out: Record<string, string[]> = { chat: [], generate: [], tools: [], vision: [], reasoning: [] };
  for (const record of records) for (const ability of record.model_ability) (out[ability] ??= []).push(record.model_name);
  return out;
}

/** The chat format of every family that has one: `{name: {chat_template, stop_token_ids, stop}}`. */
export function builtinPrompts(records: readonly LlmRecord[]): Record<string, { chat_template: string; stop_token_ids: number[]; stop: string[] }> {
  const out: Record<string, { chat_template: string; stop_token_ids: number[]; stop: string[] }> = {};
  for (const record of records) {
    if (!record.chat_template) continue;
    out[record.model_name] = { chat_template: record.chat_template, stop_token_ids: record.stop_token_ids ?? [], stop: record.stop ?? [] };
  }
  return out;
}

/** Families vLLM can serve by their formats (what vLLM would need installed and a GPU for is not asked here). */
export function vllmSupported(records: readonly LlmRecord[]): { chat: string[]; generate: string[] } {
  const vllm = ENGINE_TABLE.LLM.find((e) => e.name === 'vLLM');
  const out = { chat: [] as string[], generate: [] as string[] };
  if (!vllm) return out;
  for (const record of records) {
    if (!engineMatchesModel(vllm, { type: 'LLM', record } as TypedRecord)) continue;
    if (record.model_ability.includes('chat')) out.chat.push(record.model_name);
    else out.generate.push(record.model_name);
  }
  return out;
}
