import { HangarError } from '../errors/hangar-error.js';
import type { EnvironmentFacts } from './environment-facts.js';
import { candidateEngines, engineMatchesModel, engineMatchesSpec, unusableReason } from './engine-matching.js';
import { findEngine, type EngineDefinition } from './engine-table.js';
import { describeModel } from './model-description.js';
import { specsOf, type FlatSpec, type TypedRecord } from './model-record.js';
import { sameModelSize } from './model-size.js';
import { localModelPath } from './model-uri.js';
import type { LoadFields, ResolvedModel } from './resolved-model.js';
import { describeIssues } from './schema-issues.js';

/** The launch parameters that choose a model, engine and spec (contract §3.1). */
export interface LaunchSelection {
  model_type?: string | null;
  model_name: string;
  model_engine?: string | null;
  model_format?: string | null;
  model_size_in_billions?: number | string | null;
  quantization?: string | null;
  /** Xinference's `download_hub`: prefer the spec from this hub. */
  download_hub?: string | null;
  /** HANGAR_MODEL_SRC's hub: this hub's spec first where the family has one, else the others. */
  preferred_hub?: string | null;
  /** The launch's extra fields, checked against the engine's options where it lists them. */
  engine_kwargs?: Record<string, unknown>;
}

/**
 * Picks the engine and the spec for a launch, the way Xinference does (notes §9.5):
 * the engine is named (required for LLM, matched case-insensitively) or, for other
 * types, the first usable one that fits; the spec is the first that matches the
 * filters, where a missing `quantization` means `none` for pytorch weights.
 */
export function resolveLaunch(typed: TypedRecord, selection: LaunchSelection, env: EnvironmentFacts): ResolvedModel {
  const engine = pickEngine(typed, selection, env);
  checkOptions(engine, selection.engine_kwargs ?? {});
  const spec = typed.type === 'flexible' ? undefined : pickSpec(typed, selection, engine);
  const { type, record } = typed;
  return {
    modelType: type,
    modelName: record.model_name,
    engine: engine.name,
    runtimeEngine: engine.runtimeEngine,
    cpuBound: engine.cpuBound ?? true,
    abilities: abilities(typed),
    load: loadFields(typed, spec),
    description: describeModel(typed, spec),
  };
}

function pickEngine(typed: TypedRecord, selection: LaunchSelection, env: EnvironmentFacts): EngineDefinition {
  const name = typed.record.model_name;
  const wanted = selection.model_engine ?? null;
  if (wanted === null || wanted === '') {
    if (typed.type === 'LLM') throw new HangarError('missing_model_engine', [], { param: 'model_engine' });
    const candidates = candidateEngines(typed);
    const usable = candidates.find((engine) => unusableReason(engine, env) === null);
    if (usable) return usable;
    const first = candidates[0];
    const why = (first ? unusableReason(first, env) : null) ?? `No known ${typed.type} engine fits this model.`;
    throw new HangarError('engine_unavailable', [name, first?.name ?? '(none)', why], { param: 'model_engine' });
  }
  const engine = findEngine(typed.type, wanted);
  if (!engine || !engineMatchesModel(engine, typed)) {
    const why = engine ? `Engine ${engine.name} does not fit model ${name}.` : `${wanted} is not a known ${typed.type} engine.`;
    throw new HangarError('engine_unavailable', [name, wanted, why], { param: 'model_engine' });
  }
  const reason = unusableReason(engine, env);
  if (reason !== null) throw new HangarError('engine_unavailable', [name, wanted, reason], { param: 'model_engine' });
  return engine;
}

function checkOptions(engine: EngineDefinition, engineKwargs: Record<string, unknown>): void {
  const checked = engine.options?.safeParse(engineKwargs);
  if (!checked || checked.success) return;
  const { message, param } = describeIssues(checked.error);
  throw new HangarError('invalid_field', [message], { param });
}

function pickSpec(typed: TypedRecord, selection: LaunchSelection, engine: EngineDefinition): FlatSpec {
  const name = typed.record.model_name;
  const { model_format, model_size_in_billions, quantization, download_hub } = selection;
  const filters: Array<[string, (spec: FlatSpec) => boolean]> = [];
  if (model_format) filters.push(['model_format', (s) => s.model_format.toLowerCase() === model_format.toLowerCase()]);
  // Sizes only tell LLM specs apart; other types ignore the parameter, as Xinference does.
  if (typed.type === 'LLM' && model_size_in_billions !== null && model_size_in_billions !== undefined && model_size_in_billions !== '') {
    filters.push(['model_size_in_billions', (s) => sameModelSize(s['model_size_in_billions'] as number | string, model_size_in_billions)]);
  }
  if (quantization) filters.push(['quantization', (s) => s.quantization.toLowerCase() === quantization.toLowerCase()]);
  if (download_hub) filters.push(['download_hub', (s) => s.model_hub === download_hub]);

  let specs = specsOf(typed.record);
  for (const [param, keep] of filters) {
    specs = specs.filter(keep);
    if (specs.length === 0) {
      const shown = (v: unknown) => (v === null || v === undefined || v === '' ? 'None' : String(v));
      throw new HangarError('model_spec_not_found', [name, shown(model_format), shown(model_size_in_billions), shown(quantization)], { param });
    }
  }
  // Stable: the preferred hub's specs first, each hub's in the family's order.
  const preferred = selection.preferred_hub;
  if (preferred && !download_hub) specs = [...specs.filter((s) => s.model_hub === preferred), ...specs.filter((s) => s.model_hub !== preferred)];
  if (!quantization) {
    const plain = specs.filter((s) => s.model_format !== 'pytorch' || s.quantization === 'none');
    if (plain.length > 0) specs = plain;
  }
  const spec = specs.find((s) => engineMatchesSpec(engine, typed, s));
  if (!spec) {
    const why = `No spec of ${name} matching the launch parameters is in a format engine ${engine.name} reads.`;
    throw new HangarError('engine_unavailable', [name, engine.name, why], { param: 'model_format' });
  }
  return spec;
}

function abilities({ type, record }: TypedRecord): string[] {
  switch (type) {
    case 'embedding':
      return ['embed'];
    case 'rerank':
      return ['rerank'];
    case 'flexible':
      return ['flexible'];
    default:
      return [...record.model_ability];
  }
}

function loadFields(typed: TypedRecord, spec: FlatSpec | undefined): LoadFields {
  const { type, record } = typed;
  const load: LoadFields = { launcher_args: {} };
  const uri = localModelPath(spec ? spec.model_uri : (record as { model_uri?: string | null }).model_uri);
  if (uri !== null) load.model_uri = uri;
  if (spec) {
    if (spec.model_id) load.model_id = spec.model_id;
    if (spec.model_hub) load.model_hub = spec.model_hub;
    if (spec.model_revision) load.model_revision = spec.model_revision;
    load.model_format = spec.model_format;
    load.quantization = spec.quantization;
    const template = spec['model_file_name_template'];
    if (typeof template === 'string') load.model_file_name_template = template;
    const splitTemplate = spec['model_file_name_split_template'];
    const parts = spec['quantization_parts'];
    if (typeof splitTemplate === 'string' && parts !== null && typeof parts === 'object') {
      load.model_file_name_split_template = splitTemplate;
      load.quantization_parts = parts as Record<string, string[]>;
    }
  }
  switch (type) {
    case 'LLM':
      if (spec) load.model_size_in_billions = spec['model_size_in_billions'] as number | string;
      if (record.chat_template !== null) load.chat_template = record.chat_template;
      load.stop = record.stop;
      load.stop_token_ids = record.stop_token_ids;
      load.context_length = record.context_length;
      // How the engine reads tool calls and reasoning out of the text (docs/runtime-protocol.md).
      if (record.tool_parser) load.tool_parser = record.tool_parser;
      if (record.reasoning_start_tag) load.reasoning_start_tag = record.reasoning_start_tag;
      if (record.reasoning_end_tag) load.reasoning_end_tag = record.reasoning_end_tag;
      break;
    case 'image':
    case 'audio':
    case 'video':
      if (record.default_model_config) load.model_config = record.default_model_config;
      if (record.default_generate_config) load.generate_config = record.default_generate_config;
      break;
    case 'flexible':
      load.launcher = record.launcher;
      // Validated when registered: always a JSON object.
      load.launcher_args = JSON.parse(record.launcher_args) as Record<string, unknown>;
      break;
    default:
      break;
  }
  return load;
}
