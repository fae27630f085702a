import { InvalidInput } from '../invalid-input.js';
import { checkGrammarSize } from './gbnf-size.js';

export const DEFAULT_MAX_TOKENS = 256;

/** OpenAI's response_format as a guide for the grammar: free text, any JSON object, or a schema. */
export type Guide = { kind: 'json_object' } | { kind: 'json_schema'; schema: Record<string, unknown> };

/**
 * A call's `generate_config`, checked (docs/runtime-protocol.md, the transformers
 * engine's list, which this engine takes whole). Keys it does not use are ignored
 * (clients send OpenAI's whole set); a key set to null means "not given".
 */
export interface GenerateConfig {
  /** null: DEFAULT_MAX_TOKENS, capped by the room the context leaves. */
  maxTokens: number | null;
  temperature: number;
  topP: number;
  /** 0: off. */
  topK: number;
  minP: number;
  repetitionPenalty: number;
  frequencyPenalty: number;
  presencePenalty: number;
  logitBias: Map<number, number>;
  seed: number | null;
  stop: string[];
  stopTokenIds: number[];
  echo: boolean;
  ignoreEos: boolean;
  /** null: no log-probabilities; else this many alternatives per token. */
  topLogprobs: number | null;
  guide: Guide | null;
  /** A GBNF grammar of the client's own (llama-server's `grammar` field), or null. */
  grammar: string | null;
}

type Raw = Record<string, unknown>;

export function parseGenerateConfig(raw: unknown): GenerateConfig {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidInput(`generate_config must be a map, got ${kindOf(raw)}`);
  const given = raw as Raw;
  const get = (key: string): unknown => (given[key] === null ? undefined : given[key]);
  if (get('min_tokens') !== undefined && get('min_tokens') !== 0) {
    throw new InvalidInput('min_tokens is not supported by the llama.cpp engine (ignore_eos with max_tokens fixes a length)');
  }
  const config: GenerateConfig = {
    maxTokens: integer(get('max_tokens'), 'max_tokens', 1),
    temperature: number(get('temperature') ?? 1, 'temperature', 0),
    topP: number(get('top_p') ?? 1, 'top_p', 0),
    topK: integer(get('top_k') ?? 0, 'top_k', -1) ?? 0,
    minP: number(get('min_p') ?? 0, 'min_p', 0),
    repetitionPenalty: number(get('repetition_penalty') ?? 1, 'repetition_penalty', 0),
    frequencyPenalty: number(get('frequency_penalty') ?? 0, 'frequency_penalty', -2),
    presencePenalty: number(get('presence_penalty') ?? 0, 'presence_penalty', -2),
    logitBias: logitBias(get('logit_bias') ?? {}),
    seed: integer(get('seed'), 'seed'),
    stop: strings(get('stop') ?? []),
    stopTokenIds: tokenIds(get('stop_token_ids') ?? []),
    echo: bool(get('echo') ?? false, 'echo'),
    ignoreEos: bool(get('ignore_eos') ?? false, 'ignore_eos'),
    topLogprobs: topLogprobs(get('logprobs'), get('top_logprobs')),
    guide: guide(get('response_format')),
    grammar: grammarText(get('grammar')),
  };
  if (config.grammar !== null && config.guide) throw new InvalidInput('grammar and response_format cannot both shape one answer: use one');
  // Once the grammar is complete only an end token may follow, which ignore_eos forbids (llama-server fails the call).
  if (config.grammar !== null && config.ignoreEos) throw new InvalidInput('grammar: an answer held to a grammar ends when the grammar is complete, so ignore_eos cannot be asked with it');
  if (config.topK < 0) config.topK = 0;
  for (const name of ['frequencyPenalty', 'presencePenalty'] as const) {
    if (config[name] > 2) throw new InvalidInput(`${snake(name)} must be from -2 to 2, got ${config[name]}`);
  }
  if (config.minP > 1) throw new InvalidInput(`min_p must be from 0 to 1, got ${config.minP}`);
  if (!(config.topP > 0 && config.topP <= 1)) throw new InvalidInput(`top_p must be in (0, 1], got ${config.topP}`);
  // The Python runtime's rules (generate_config.py): below this the penalised logits
  // overflow; a temperature this small is greedy, as in vLLM.
  if (config.repetitionPenalty < MIN_REPETITION_PENALTY) {
    throw new InvalidInput(`repetition_penalty must be at least ${MIN_REPETITION_PENALTY}, got ${config.repetitionPenalty}`);
  }
  if (config.temperature > 0 && config.temperature < GREEDY_BELOW) config.temperature = 0;
  // A top_p below float's smallest value would reach llama.cpp as 0.
  config.topP = Math.max(config.topP, 1e-6);
  return config;
}

const GREEDY_BELOW = 1e-5;
const MIN_REPETITION_PENALTY = 0.01;

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

function number(value: unknown, name: string, minimum: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidInput(`${name} must be a number, got ${shown(value)}`);
  if (value < minimum) throw new InvalidInput(`${name} must be at least ${minimum}, got ${value}`);
  return value;
}

function integer(value: unknown, name: string, minimum?: number): number | null {
  if (value === undefined) return null;
  // JSON has one number type: 3.0 is a fine max_tokens, 3.5 is not.
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new InvalidInput(`${name} must be an integer, got ${shown(value)}`);
  if (minimum !== undefined && value < minimum) throw new InvalidInput(`${name} must be at least ${minimum}, got ${value}`);
  return value;
}

function bool(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new InvalidInput(`${name} must be true or false, got ${shown(value)}`);
  return value;
}

function strings(value: unknown): string[] {
  const items = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(items) || !items.every((s) => typeof s === 'string')) {
    throw new InvalidInput(`stop must be a string or a list of strings, got ${shown(value)}`);
  }
  return (items as string[]).filter((s) => s.length > 0);
}

function tokenIds(value: unknown): number[] {
  if (!Array.isArray(value)) throw new InvalidInput(`stop_token_ids must be a list of integers, got ${shown(value)}`);
  return value.map((v) => integer(v, 'stop_token_ids item', 0)!);
}

function logitBias(value: unknown): Map<number, number> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidInput(`logit_bias must be a map of token id to bias, got ${shown(value)}`);
  }
  const out = new Map<number, number>();
  for (const [key, bias] of Object.entries(value)) {
    const token = Number(key);
    if (!/^-?\d+$/.test(key.trim()) || !Number.isSafeInteger(token)) throw new InvalidInput(`logit_bias keys must be token ids, got ${shown(key)}`);
    if (token < 0) throw new InvalidInput(`logit_bias: token id ${token} is negative`);
    const amount = number(bias, `logit_bias[${key}]`, -100);
    if (amount > 100) throw new InvalidInput(`logit_bias[${key}] must be from -100 to 100, got ${amount}`);
    out.set(token, amount);
  }
  return out;
}

/** `logprobs` true (chat) or a count (completions' legacy form), and `top_logprobs`. */
function topLogprobs(asked: unknown, top: unknown): number | null {
  if (asked === undefined || asked === false) return null;
  const count = integer(asked === true ? (top ?? 0) : asked, 'top_logprobs', 0)!;
  if (count > 20) throw new InvalidInput(`top_logprobs must be an integer from 0 to 20, got ${count}`);
  return count;
}

/** llama-server's own `grammar` (GBNF text); an empty one asks for nothing, as there. */
function grammarText(value: unknown): string | null {
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw new InvalidInput(`grammar must be a GBNF grammar (a string), got ${shown(value)}`);
  checkGrammarSize(value);
  return value;
}

function guide(value: unknown): Guide | null {
  if (value === undefined) return null;
  const format = value as { type?: unknown; json_schema?: { schema?: unknown } } | null;
  if (typeof format !== 'object' || format === null || typeof format.type !== 'string') {
    throw new InvalidInput(`response_format must be a map with a type, got ${shown(value)}`);
  }
  if (format.type === 'text') return null;
  if (format.type === 'json_object') return { kind: 'json_object' };
  if (format.type === 'json_schema') {
    const schema = format.json_schema?.schema;
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw new InvalidInput('response_format.json_schema.schema must be a JSON schema (a map)');
    }
    return { kind: 'json_schema', schema: schema as Record<string, unknown> };
  }
  throw new InvalidInput(`response_format.type must be text, json_object or json_schema, got ${shown(format.type)}`);
}
