import { InvalidInput } from '../invalid-input.js';
import { parseEngineOptions, type EngineOptions } from './engine-options.js';
import type { GgufLocation } from './model-file.js';
import { toolCallFormat, type ToolFormat } from './tool-calls.js';

/** The LOAD fields this engine reads (docs/runtime-protocol.md, "llama_cpp"), checked. */
export interface LlamaLoadSpec {
  location: GgufLocation;
  modelType: 'LLM' | 'embedding';
  options: EngineOptions;
  replicas: number;
  chatTemplate: string | null;
  stop: string[];
  stopTokenIds: number[];
  contextLength: number | null;
  toolFormat: ToolFormat;
  reasoningTags: [string, string] | null;
  abilities: string[] | null;
  /** embedding: the registration's `dimensions` and `max_tokens`, when it gives them. */
  dimensions: number | null;
  maxTokens: number | null;
}

export function parseLoadSpec(spec: Record<string, unknown>): LlamaLoadSpec {
  const modelType = spec.model_type;
  if (modelType !== 'LLM' && modelType !== 'embedding') {
    throw new InvalidInput(`The llama.cpp engine serves LLM and embedding models, not ${String(modelType)}`);
  }
  const str = (key: string): string | null => {
    const value = spec[key];
    if (value === undefined || value === null || value === '') return null;
    if (typeof value !== 'string') throw new InvalidInput(`${key} must be a string, got ${typeof value}`);
    return value;
  };
  const count = (key: string): number | null => {
    const value = spec[key];
    return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
  };
  const stop = spec.stop ?? [];
  const stopList = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(stopList) || !stopList.every((s) => typeof s === 'string')) throw new InvalidInput('stop must be a string or a list of strings');
  const stopIds = spec.stop_token_ids ?? [];
  if (!Array.isArray(stopIds) || !stopIds.every((t) => Number.isSafeInteger(t))) throw new InvalidInput('stop_token_ids must be a list of integers');
  const abilities = spec.model_ability;
  if (abilities !== undefined && abilities !== null && (!Array.isArray(abilities) || !abilities.every((a) => typeof a === 'string'))) {
    throw new InvalidInput('model_ability must be a list of strings');
  }
  const start = str('reasoning_start_tag');
  const end = str('reasoning_end_tag');
  return {
    location: spec,
    modelType,
    options: parseEngineOptions(spec.engine_kwargs),
    replicas: count('replicas') ?? 1,
    chatTemplate: str('chat_template'),
    stop: stopList as string[],
    stopTokenIds: stopIds as number[],
    contextLength: count('context_length'),
    toolFormat: toolCallFormat(str('tool_parser'), str('model_family')),
    reasoningTags: start && end ? [start, end] : null,
    abilities: (abilities as string[] | undefined) ?? null,
    dimensions: count('dimensions'),
    maxTokens: count('max_tokens'),
  };
}
