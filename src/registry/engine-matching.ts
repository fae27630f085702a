import type { EnvironmentFacts } from './environment-facts.js';
import { ENGINE_TABLE, type EngineDefinition } from './engine-table.js';
import { specsOf, type FlatSpec, type TypedRecord } from './model-record.js';

/**
 * Why an engine cannot run here, or null when the environment has all it needs.
 * The sentence goes to users as is (`/v1/engines`), so it says what to install.
 */
export function unusableReason(engine: EngineDefinition, env: EnvironmentFacts): string | null {
  const reasons: string[] = [];
  const modules = engine.requires.flatMap((r) => (r.kind === 'python_module' && !env.pythonModules.has(r.name) ? [r.name] : []));
  if (modules.length === 1) {
    reasons.push(`Engine ${engine.name} needs Python module ${modules[0]}, which is not installed in the runtime environment`);
  } else if (modules.length > 1) {
    reasons.push(`Engine ${engine.name} needs Python modules ${modules.join(', ')}, which are not installed in the runtime environment`);
  }
  for (const r of engine.requires) {
    if (r.kind === 'executable' && !env.executables.has(r.name)) {
      reasons.push(`Engine ${engine.name} needs the program ${r.name}, which is not on the PATH of the runtime environment`);
    }
    if (r.kind === 'node_module' && !env.nodeModules.has(r.name)) {
      reasons.push(`Engine ${engine.name} needs the npm package ${r.name}, which is not installed (run \`npm ci\`)`);
    }
  }
  if (engine.requires.some((r) => r.kind === 'gpu') && env.gpuCount < 1) {
    reasons.push(`Engine ${engine.name} needs a GPU`);
  }
  return reasons.length > 0 ? reasons.join('; ') : null;
}

/** Model-level criteria: family, ability, launcher. */
function matchesModel(engine: EngineDefinition, { record }: TypedRecord): boolean {
  const { families, abilities, launcher } = engine.match;
  const fields = record as { model_family?: unknown; model_ability?: unknown; launcher?: unknown };
  if (families && !(typeof fields.model_family === 'string' && families.includes(fields.model_family))) return false;
  if (abilities) {
    const own = Array.isArray(fields.model_ability) ? (fields.model_ability as unknown[]) : [];
    if (!own.some((a) => typeof a === 'string' && abilities.includes(a))) return false;
  }
  if (launcher !== undefined && fields.launcher !== launcher) return false;
  return true;
}

/** Whether the engine can run this one spec of the model (format is per spec). */
export function engineMatchesSpec(engine: EngineDefinition, typed: TypedRecord, spec: FlatSpec): boolean {
  const { formats } = engine.match;
  return matchesModel(engine, typed) && (!formats || formats.includes(spec.model_format));
}

/** Whether the engine can run the model at all, whatever this machine has installed. */
export function engineMatchesModel(engine: EngineDefinition, typed: TypedRecord): boolean {
  const specs = specsOf(typed.record);
  if (specs.length === 0) return matchesModel(engine, typed);
  return specs.some((spec) => engineMatchesSpec(engine, typed, spec));
}

/** The known engines that fit the model, in preference order. */
export function candidateEngines(typed: TypedRecord): EngineDefinition[] {
  return ENGINE_TABLE[typed.type].filter((engine) => engineMatchesModel(engine, typed));
}

export type EngineParams = Record<string, unknown> & { model_name: string };

/**
 * The `/v1/engines` answer (notes §3.9): every engine that fits the model, mapped to
 * the parameter combinations it can launch, or, when this machine cannot run it, to
 * the reason. Engines that do not fit the model at all (llama.cpp for a family with
 * no gguf spec, espeak for a speech-to-text model) are left out: listing them would
 * only say "not applicable" for every other model.
 */
export function engineTable(typed: TypedRecord, env: EnvironmentFacts): Record<string, EngineParams[] | string> {
  const table: Record<string, EngineParams[] | string> = {};
  for (const engine of candidateEngines(typed)) {
    table[engine.name] = unusableReason(engine, env) ?? engineParams(engine, typed);
  }
  return table;
}

function engineParams(engine: EngineDefinition, typed: TypedRecord): EngineParams[] {
  const { type, record } = typed;
  switch (type) {
    case 'LLM':
    case 'embedding':
    case 'rerank': {
      // One entry per (format, size), listing its quantizations, as Xinference groups them.
      const groups = new Map<string, EngineParams & { quantizations: string[] }>();
      for (const spec of record.model_specs) {
        if (!engineMatchesSpec(engine, typed, spec)) continue;
        const size = 'model_size_in_billions' in spec ? (spec.model_size_in_billions as number | string) : undefined;
        const key = `${spec.model_format}\u0000${String(size)}`;
        let group = groups.get(key);
        if (!group) {
          group = {
            model_name: record.model_name,
            model_format: spec.model_format,
            ...(type === 'LLM' ? { model_size_in_billions: size } : {}),
            quantizations: [],
          };
          groups.set(key, group);
        }
        if (!group.quantizations.includes(spec.quantization)) group.quantizations.push(spec.quantization);
      }
      return [...groups.values()];
    }
    case 'image':
    case 'audio':
    case 'video':
      return [{ model_name: record.model_name, model_family: record.model_family, model_ability: record.model_ability }];
    case 'flexible':
      return [{ model_name: record.model_name, launcher: record.launcher }];
  }
}
