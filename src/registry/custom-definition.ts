import type { z } from 'zod';
import { toolParserIsParsed } from './tool-parsers.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../config/json-nesting.js';
import { HangarError } from '../errors/hangar-error.js';
import { ENGINE_TABLE } from './engine-table.js';
import { invisibleFormatting } from './invisible-formatting.js';
import { mediaRecord, mediaSpec } from './flatten.js';
import { recordSchema, type FlatSpec, type LlmRecord, type TypedRecord } from './model-record.js';
import type { ModelType } from './model-type.js';
import { MODEL_NAME_PATTERN } from './schemas/common.js';
import { embeddingCustomSchema } from './schemas/embedding.js';
import { flexibleCustomSchema } from './schemas/flexible.js';
import { llmCustomSchema } from './schemas/llm.js';
import { mediaCustomSchema } from './schemas/media.js';
import { rerankCustomSchema } from './schemas/rerank.js';
import { describeIssues } from './schema-issues.js';
import { jsonSyntaxReason } from '../config/json-syntax.js';

/** What custom LLM rules need to know about the built-in LLM families. */
export interface BuiltinLlmLookup {
  builtinLlm(name: string): LlmRecord | undefined;
  builtinLlms(): Iterable<LlmRecord>;
}

/**
 * Turns a registration's `model` (a string holding JSON, Xinference's shape, or an
 * object, ours) into the normalised record of its type, applying Xinference 2.0's
 * custom rules (notes §8.3). Pure: name clashes and the existence of `model_uri`
 * are checked by the caller, which knows the registry and may touch the disk.
 * The result is also a valid definition again, which is what gets persisted.
 */
export function parseCustomDefinition(type: ModelType, model: unknown, builtins: BuiltinLlmLookup): TypedRecord {
  const definition = withoutListingKeys(decode(model));
  checkName(definition.model_name);
  switch (type) {
    case 'LLM': {
      const parsed = validate(llmCustomSchema, definition);
      requireWeights(parsed.model_specs);
      return { type, record: recordSchema(type).parse(applyFamilyRules(parsed, builtins)) };
    }
    case 'embedding': {
      const record = validate(embeddingCustomSchema, definition);
      requireWeights(record.model_specs);
      return { type, record };
    }
    case 'rerank': {
      const record = validate(rerankCustomSchema, definition);
      requireWeights(record.model_specs);
      return { type, record };
    }
    case 'image':
    case 'audio':
    case 'video': {
      // `model_specs` is derived from the top-level fields; a persisted record carries a copy.
      const { model_specs: _derived, ...rest } = definition;
      const parsed = validate(mediaCustomSchema(type), rest);
      const { model_id, model_hub, model_uri, model_revision } = parsed;
      return { type, record: mediaRecord(type, parsed, [mediaSpec({ model_id, model_hub, model_uri, model_revision })]) };
    }
    case 'flexible': {
      const parsed = validate(flexibleCustomSchema, definition);
      const launcher_args = JSON.stringify(launcherArgs(parsed.launcher_args));
      return { type, record: recordSchema(type).parse({ ...parsed, launcher: launcherName(parsed.launcher), launcher_args }) };
    }
  }
}

/** Half the 16 MiB a stored definition is read up to at start (readRegularText): normalising adds fields. */
const MAX_DEFINITION_CHARS = 8 * 1024 * 1024;

function decode(model: unknown): Record<string, unknown> {
  let value = model;
  if (typeof model === 'string') {
    try {
      value = JSON.parse(model);
    } catch (err) {
      throw invalid('model', `is not valid JSON (${jsonSyntaxReason(err)})`);
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('model', 'must be a model definition: a JSON object, or a string holding one');
  }
  // The object form met the body parser's limit; the string form had none, and 6 kB of
  // nesting kept a registration whose listing overflowed the stack (a 500 for everyone).
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) throw invalid('model', `is nested deeper than ${MAX_JSON_DEPTH} levels`);
  // Kept as a pretty-printed file that the next start reads only up to 16 MiB: a larger
  // one was accepted, then silently gone after a restart.
  if (JSON.stringify(value, null, 2).length > MAX_DEFINITION_CHARS) throw invalid('model', `is over ${MAX_DEFINITION_CHARS / 1024 / 1024} MiB as stored; a definition is a few kB`);
  return value as Record<string, unknown>;
}

/** A definition copied from a detailed listing carries keys the registry computes; they are not the user's. */
function withoutListingKeys({ is_builtin: _b, cache_status: _c, download_hubs: _d, ...rest }: Record<string, unknown>): Record<string, unknown> {
  return rest;
}

/** As long as a uid may be: a launch takes the name as its uid by default. */
const MAX_MODEL_NAME_LENGTH = 100;

function checkName(name: unknown): void {
  if (typeof name !== 'string' || name.length === 0) throw invalid('model_name', 'is required and must be a non-empty string');
  const refuse = (why: string): never => {
    throw new HangarError('invalid_model_name', [`${JSON.stringify(name.slice(0, 120))} (${why})`], { param: 'model_name' });
  };
  if (name.length > MAX_MODEL_NAME_LENGTH) refuse(`it must have at most ${MAX_MODEL_NAME_LENGTH} characters, it has ${name.length}`);
  // A lone surrogate has no UTF-8 form: no URL could name it to read or remove it.
  if (!name.isWellFormed()) refuse('it must be Unicode text');
  // `.` and `..` are no path segment a URL keeps, and a saved `.name.json` is a hidden file.
  if (name.startsWith('.')) refuse('it must not start with "."');
  // Invisible formatting (a zero-width space, a right-to-left override) lets a name pass
  // for another one, a built-in's included, in every listing and log.
  const invisible = invisibleFormatting(name);
  if (invisible) refuse(invisible);
  if (!MODEL_NAME_PATTERN.test(name)) throw new HangarError('invalid_model_name', [name], { param: 'model_name' });
}

function validate<S extends z.ZodType>(schema: S, definition: unknown): z.output<S> {
  const result = schema.safeParse(definition);
  if (result.success) return result.data;
  const { message, param } = describeIssues(result.error);
  throw new HangarError('invalid_registration', [message], { param });
}

/** Hub models are launched by id, local ones by path; a spec with neither cannot be loaded. */
function requireWeights(specs: readonly FlatSpec[]): void {
  specs.forEach((spec, i) => {
    if (!spec.model_uri && !spec.model_id) {
      throw invalid(`model_specs.${i}.model_uri`, 'each spec needs model_uri (local weights) or model_id (a hub repository)');
    }
  });
}

type LlmDefinition = z.output<typeof llmCustomSchema>;

/**
 * Xinference's custom LLM rules (notes §8.3): a chat model without `chat_template`
 * takes its `model_family`'s; a `chat_template` naming a built-in family is replaced
 * by that family's template, and its stop words and reasoning tags fill the gaps;
 * `tools` and `vision` need a built-in family that has them, because the parsing of
 * tool calls and images is family-specific (`tools` may instead name a `tool_parser`
 * the engines parse).
 */
function applyFamilyRules(def: LlmDefinition, builtins: BuiltinLlmLookup): LlmDefinition {
  const family = builtins.builtinLlm(def.model_family);
  let chatTemplate = def.chat_template;
  if (def.model_ability.includes('chat') && chatTemplate === null) {
    if (family && !family.chat_template) {
      throw invalid('chat_template', `is required: the built-in family ${def.model_family} uses each model's own template (tokenizer_config.json or GGUF metadata) and has no copy to lend; give the model's template`);
    }
    if (!family?.chat_template) {
      throw invalid(
        'chat_template',
        `is required for a chat model whose model_family (${def.model_family}) is not a built-in chat family; give a Jinja template or the name of a built-in chat family`,
      );
    }
    chatTemplate = family.model_name;
  }
  const templateFamily = chatTemplate === null ? undefined : builtins.builtinLlm(chatTemplate);
  const result: LlmDefinition = { ...def, chat_template: chatTemplate };
  if (templateFamily?.chat_template) {
    result.chat_template = templateFamily.chat_template;
    if (def.stop_token_ids.length === 0) result.stop_token_ids = templateFamily.stop_token_ids;
    if (def.stop.length === 0) result.stop = templateFamily.stop;
    result.reasoning_start_tag = def.reasoning_start_tag ?? templateFamily.reasoning_start_tag;
    result.reasoning_end_tag = def.reasoning_end_tag ?? templateFamily.reasoning_end_tag;
    result.tool_parser = def.tool_parser ?? templateFamily.tool_parser;
  }
  for (const ability of ['tools', 'vision'] as const) {
    if (!def.model_ability.includes(ability) || family?.model_ability.includes(ability)) continue;
    // A tool_parser whose format the engines parse says how to read the calls without a built-in family (a hub registration's, read from its template).
    if (ability === 'tools' && toolParserIsParsed(result.tool_parser)) continue;
    const able = [...builtins.builtinLlms()].filter((f) => f.model_ability.includes(ability)).map((f) => f.model_name);
    throw invalid(
      'model_ability',
      `${ability} needs model_family to be a built-in family with ${ability} support (${able.length > 0 ? able.join(', ') : 'none is known'}), not ${def.model_family}`,
    );
  }
  return result;
}

/** Xinference's launchers are dotted import paths; its `transformers` one is also ours. */
const XINFERENCE_LAUNCHER_PREFIX = 'xinference.model.flexible.launchers.';

function launcherName(launcher: string): string {
  const name = launcher.startsWith(XINFERENCE_LAUNCHER_PREFIX) ? launcher.slice(XINFERENCE_LAUNCHER_PREFIX.length) : launcher;
  const known = ENGINE_TABLE.flexible.map((e) => e.name);
  if (!known.includes(name)) throw invalid('launcher', `unknown launcher ${launcher}; use one of ${known.join(', ')}`);
  return name;
}

function launcherArgs(args: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof args !== 'string') return args;
  try {
    const value: unknown = JSON.parse(args);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below with Xinference's text
  }
  throw invalid('launcher_args', `Invalid model launcher args ${args}.`);
}

function invalid(field: string, message: string): HangarError {
  return new HangarError('invalid_registration', [`${field}: ${message}`], { param: field });
}
