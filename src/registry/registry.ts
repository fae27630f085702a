import { existsSync } from 'node:fs';
import path from 'node:path';
import { HangarError } from '../errors/hangar-error.js';
import { loadBuiltinCatalog, DEFAULT_BUILTIN_DIR, type BuiltinCatalog } from './builtin-catalog.js';
import { specCacheStatus } from './cache-status.js';
import { parseCustomDefinition, type BuiltinLlmLookup } from './custom-definition.js';
import { BuiltinShadows } from './builtin-shadows.js';
import { CustomStore } from './custom-store.js';
import { RegistrationOwners } from './registration-owners.js';
import { candidateEngines, engineMatchesSpec, engineTable, unusableReason, type EngineParams } from './engine-matching.js';
import { requiredExecutables, requiredNodeModules, requiredPythonModules } from './engine-table.js';
import { ModelCache } from './model-cache.js';
import { registrationCodeRisks } from './code-risks.js';
import { buildLlmRegistration } from './auto-registration.js';
import { builtinPrompts, familiesByAbility, vllmSupported } from './llm-summaries.js';
import type { EnvironmentFacts } from './environment-facts.js';
import { resolveLaunch, type LaunchSelection } from './launch-resolution.js';
import { specsOf, type LlmRecord, type ModelRecord, type TypedRecord } from './model-record.js';
import { isModelType, MODEL_TYPES, type ModelType } from './model-type.js';
import { checkModelUris, storedRecord, type StoredContext } from './stored-record.js';
import { checkModelDir } from '../config/model-dirs.js';
import type { RegistryLogger } from './registry-logger.js';
import type { ResolvedModel } from './resolved-model.js';
import { foldedName } from './name-folding.js';

export interface RegistryOptions {
  /** The service's home folder: custom registrations live under `<home>/model/v2/`, weights under `<home>/cache/`. */
  home: string;
  env: EnvironmentFacts;
  logger: RegistryLogger;
  /** Where the built-in catalog is read from; the packaged one by default (tests point it elsewhere). */
  builtinDir?: string;
  /** `--model-dirs`: where registered local models may be; null: anywhere. */
  modelDirs?: readonly string[] | null;
}

export interface ListItem {
  model_name: string;
  is_builtin: boolean;
  [key: string]: unknown;
}

export type EngineTable = Record<string, EngineParams[] | string>;

type CustomCatalog = { [T in ModelType]: Map<string, ModelRecord> };

const emptyCatalog = (): CustomCatalog =>
  Object.fromEntries(MODEL_TYPES.map((t) => [t, new Map<string, ModelRecord>()])) as CustomCatalog;

/**
 * The launchable models: the built-in catalog plus the user's registrations, the
 * engines that can run each one here, and the choice of engine and spec at launch
 * (contract §2). Records handed out are copies; the registry's own never change
 * outside `register`, `unregister` and `load`.
 */
export class Registry {
  private builtins: BuiltinCatalog = emptyCatalog();
  private customs: CustomCatalog = emptyCatalog();
  private shadows: BuiltinShadows;
  /**
   * Names being registered right now (`type/folded name`), so two concurrent
   * registrations of one name, or of names that differ only in case or Unicode form,
   * cannot both pass the clash check (they did, four of them at once).
   */
  private readonly pending = new Set<string>();
  private env: EnvironmentFacts;
  private readonly store: CustomStore;
  private readonly owners: RegistrationOwners;
  private readonly logger: RegistryLogger;
  private readonly builtinDir: string;
  private readonly home: string;
  private readonly modelDirs: readonly string[] | null;
  private readonly llmLookup: BuiltinLlmLookup = {
    builtinLlm: (name) => this.shadows.family(name),
    builtinLlms: () => this.shadows.families(),
  };

  private get stored(): StoredContext {
    return { llmLookup: this.llmLookup, modelDirs: this.modelDirs, logger: this.logger };
  }

  /** The Python modules the engine table asks about, for the caller's environment probe. */
  static requiredPythonModules(): string[] {
    return requiredPythonModules();
  }

  /** The programs the engine table asks about (looked up on the PATH). */
  static requiredExecutables(): string[] {
    return requiredExecutables();
  }

  /** The npm packages the engine table asks about (resolved from the control plane's tree). */
  static requiredNodeModules(): string[] {
    return requiredNodeModules();
  }

  /** Built-ins and the persisted registrations, loaded. */
  static async open(options: RegistryOptions): Promise<Registry> {
    const registry = new Registry(options);
    await registry.load();
    return registry;
  }

  /** An empty registry; `load()` fills it (`open` does both). */
  constructor(options: RegistryOptions) {
    this.home = options.home;
    this.modelDirs = options.modelDirs ?? null;
    this.env = options.env;
    this.logger = options.logger;
    this.shadows = new BuiltinShadows(this.builtins, this.logger);
    this.builtinDir = options.builtinDir ?? DEFAULT_BUILTIN_DIR;
    this.store = new CustomStore(options.home, options.logger);
    this.owners = new RegistrationOwners(options.home, options.logger);
  }

  /**
   * (Re)reads the built-in catalog (a bad built-in file throws: it is a bug) and every
   * persisted registration (a bad one is a warning naming its file; the rest load).
   */
  async load(): Promise<void> {
    this.builtins = await loadBuiltinCatalog(this.builtinDir);
    this.shadows = new BuiltinShadows(this.builtins, this.logger);
    await this.owners.load();
    const customs = emptyCatalog();
    for (const { type, file, definition } of await this.store.loadAll()) {
      const record = await storedRecord(type, file, definition, customs, this.stored);
      if (record) customs[type].set(record.model_name, record);
    }
    this.customs = customs;
    for (const type of MODEL_TYPES) for (const name of customs[type].keys()) this.shadows.hide(type, name);
    // A file that did not load keeps its owner: it may be repaired (docs/requests.md, "Restore after a restart").
    await this.owners.keepOnly((type, name) => (customs[type]?.has(name) ?? false) || existsSync(this.store.file(type, name)));
    const count = MODEL_TYPES.reduce((n, t) => n + customs[t].size, 0);
    this.logger.info({ customModels: count }, `Loaded the model catalog and ${count} custom registration(s)`);
  }

  /**
   * Registration files that did not load at start and read now, repaired on disk
   * (docs/requests.md, "Restore after a restart"): loaded beside the others, with the
   * same checks. Files of names already loaded are left alone. Returns the names added.
   */
  async loadRepaired(): Promise<string[]> {
    const added: string[] = [];
    for (const { type, file, definition } of await this.store.loadAll()) {
      if (this.customs[type].has(path.basename(file, '.json'))) continue;
      const record = await storedRecord(type, file, definition, this.customs, this.stored);
      if (!record || this.customs[type].has(record.model_name)) continue;
      this.customs[type].set(record.model_name, record);
      this.shadows.hide(type, record.model_name);
      added.push(record.model_name);
      this.logger.info({ model_type: type, model_name: record.model_name, file }, `Loaded the repaired registration ${record.model_name} from ${file}`);
    }
    return added;
  }

  /** Whether the runtime's Python can import `module` (the last environment probe). */
  hasPythonModule(module: string): boolean {
    return this.env.pythonModules.has(module);
  }

  /** The environment was probed again (e.g. after installing an engine). */
  setEnvironment(env: EnvironmentFacts): void {
    this.env = env;
  }

  /** Sorted by lower-cased name (contract §2); `detailed` adds the whole record and per-spec `cache_status`. */
  async list(type: string, options: { detailed?: boolean } = {}): Promise<ListItem[]> {
    const t = this.modelType(type);
    const entries = [
      ...[...this.builtins[t].values()].map((record) => ({ record, isBuiltin: true })),
      ...[...this.customs[t].values()].map((record) => ({ record, isBuiltin: false })),
    ].sort((a, b) => compareNames(a.record.model_name, b.record.model_name));
    if (!options.detailed) return entries.map(({ record, isBuiltin }) => ({ model_name: record.model_name, is_builtin: isBuiltin }));
    return Promise.all(entries.map(({ record, isBuiltin }) => this.detailed(t, record, isBuiltin)));
  }

  /** The flattened record; throws `registration_not_found` (404, contract §1). */
  get(type: string, name: string): ModelRecord {
    const t = this.modelType(type);
    const record = this.find(t, name);
    if (!record) throw new HangarError('registration_not_found', [name], { param: 'model_name' });
    return structuredClone(record);
  }

  /** Xinference's catalog summaries (llm-summaries.ts): by ability, chat formats, and what vLLM serves. */
  llmSummaries(): { families: Record<string, string[]>; prompts: ReturnType<typeof builtinPrompts>; vllm: { chat: string[]; generate: string[] } } {
    const records = [...this.builtins.LLM.values(), ...this.customs.LLM.values()].sort((a, b) => compareNames(a.model_name, b.model_name)) as LlmRecord[];
    return { families: familiesByAbility(records), prompts: builtinPrompts(records), vllm: vllmSupported(records) };
  }

  /**
   * The specs of one model as versions (`GET /v1/models/{type}/{name}/versions`):
   * one per format, size and quantization, each with whether its weights are on disk.
   */
  async versions(type: string, name: string): Promise<Array<Record<string, unknown>>> {
    const record = this.get(type, name);
    const out: Array<Record<string, unknown>> = [];
    for (const spec of specsOf(record)) {
      const size = spec.model_size_in_billions === undefined ? null : String(spec.model_size_in_billions).replace('.', '_');
      out.push({
        // Xinference's spelling: LLMs by name, size, format and quantization; other types by name.
        model_version: type === 'LLM' ? [record.model_name, `${size ?? '0'}B`, spec.model_format ?? 'pytorch', spec.quantization ?? 'none'].join('--') : record.model_name,
        model_format: spec.model_format ?? null,
        model_size_in_billions: spec.model_size_in_billions ?? null,
        quantization: spec.quantization ?? null,
        model_id: spec.model_id ?? null,
        model_hub: spec.model_hub ?? null,
        model_uri: spec.model_uri ?? null,
        cache_status: await specCacheStatus(this.home, spec),
      });
    }
    return out;
  }

  /** A registration built from a local save_pretrained folder (auto-registration.ts), to review or register. */
  autoRegistration(input: { modelPath: string; modelName?: string | undefined; modelFamily?: string | undefined }): Promise<Record<string, unknown>> {
    checkModelDir(input.modelPath, this.modelDirs, input.modelPath, 'model_path');
    const family = input.modelFamily === undefined ? undefined : this.llmLookup.builtinLlm(input.modelFamily);
    return buildLlmRegistration({ ...input, familyAbilities: family ? [...(family.model_ability as string[])] : null });
  }

  /** The weights cache under the home folder (model-cache.ts). */
  get cache(): ModelCache {
    return new ModelCache(this.home);
  }

  /**
   * Catalog entries whose specs download `modelId` from `hub`: what a cached
   * repository is called in the catalog (`GET /v1/cache/models`). A spec's
   * `{quantization}` placeholder matches any quantization it lists.
   */
  namesForRepository(modelId: string, hub: string): Array<{ model_type: ModelType; model_name: string; model_format: string | null; quantization: string | null }> {
    const out: Array<{ model_type: ModelType; model_name: string; model_format: string | null; quantization: string | null }> = [];
    for (const type of MODEL_TYPES) {
      for (const record of [...this.builtins[type].values(), ...this.customs[type].values()]) {
        for (const spec of specsOf(record)) {
          if (!spec.model_id || (spec.model_hub ?? 'huggingface') !== hub) continue;
          const id = spec.model_id.replace('{quantization}', spec.quantization ?? '');
          if (id.toLowerCase() !== modelId.toLowerCase()) continue;
          if (out.some((o) => o.model_type === type && o.model_name === record.model_name)) continue;
          out.push({ model_type: type, model_name: record.model_name, model_format: spec.model_format ?? null, quantization: spec.quantization ?? null });
        }
      }
    }
    return out;
  }

  /** Whether `name` is a built-in of `type` (false for unknown names). */
  isBuiltin(type: ModelType, name: string): boolean {
    return this.builtins[type].has(name);
  }

  /** The `/v1/engines` table; `null` for an unknown type or name, which Xinference answers with 200 `null` (notes §3.9). */
  engines(type: string, name: string): EngineTable | null {
    if (!isModelType(type)) return null;
    const record = this.find(type, name);
    return record ? engineTable(typed(type, record), this.env) : null;
  }

  /** A custom registration of this name and type, if there is one (hub registrations are found again by name). */
  custom(type: ModelType, name: string): ModelRecord | undefined {
    const record = this.customs[type].get(name);
    return record ? structuredClone(record) : undefined;
  }

  /** The built-in LLM family whose specs list this hub repository (case-insensitive), if one does. */
  builtinFamilyOfRepo(repo: string): LlmRecord | undefined {
    const wanted = repo.toLowerCase();
    for (const record of this.llmLookup.builtinLlms()) {
      if (specsOf(record).some((s) => s.model_id?.toLowerCase() === wanted)) return record as LlmRecord;
    }
    return undefined;
  }

  /**
   * The first engine (in ENGINE_TABLE's order) that can run this format of the model here;
   * where none can, the first that reads the format (the launch then says why it cannot
   * run); null when no engine reads it.
   */
  defaultEngine(type: ModelType, name: string, format: string): string | null {
    const record = this.find(type, name);
    if (!record) return null;
    const t = typed(type, record);
    const spec = specsOf(record).find((s) => s.model_format === format);
    if (!spec) return null;
    const reading = candidateEngines(t).filter((e) => engineMatchesSpec(e, t, spec));
    return (reading.find((e) => unusableReason(e, this.env) === null) ?? reading[0])?.name ?? null;
  }

  /**
   * Registers a custom model from the body of `POST /v1/model_registrations/{type}`;
   * `body.model` is the definition as a JSON string or an object. With `persist`
   * the definition is written to disk first, and only a successful write makes it
   * known: a registration whose file failed is not kept in memory either.
   * `authorize` sees what the registration would run (code-risks.ts) before anything
   * is kept, and throws to refuse it (the API's check of `models:code`).
   * Returns the normalised record.
   */
  async register(type: string, body: { model?: unknown }, persist: boolean, authorize?: (risks: string[]) => void, owner: string | null = null): Promise<ModelRecord> {
    const t = this.modelType(type);
    if (body === null || typeof body !== 'object' || body.model === undefined) {
      throw new HangarError('invalid_registration', ['model: is required: the model definition as a JSON string'], { param: 'model' });
    }
    const parsed = parseCustomDefinition(t, body.model, this.llmLookup);
    authorize?.(registrationCodeRisks(t, parsed.record));
    const name = parsed.record.model_name;
    const key = `${t}/${foldedName(name)}`;
    if (this.builtins[t].has(name) || this.customs[t].has(name) || this.pending.has(key)) {
      throw new HangarError('registration_conflict', [name], { param: 'model_name' });
    }
    // Names that pass for each other (name-folding.ts) are one name.
    const twin = [...this.builtins[t].keys(), ...this.customs[t].keys()].find((other) => foldedName(other) === foldedName(name));
    if (twin !== undefined) throw new HangarError('registration_conflict', [`${twin} (the names differ only in case or Unicode form)`], { param: 'model_name' });
    this.pending.add(key);
    try {
      await checkModelUris(parsed, this.modelDirs);
      if (persist) await this.store.save(t, name, parsed.record);
      this.customs[t].set(name, parsed.record);
      await this.owners.set(t, name, owner);
    } finally {
      this.pending.delete(key);
    }
    this.logger.info({ model_type: t, model_name: name, persist }, `Registered custom ${t} model ${name}`);
    return structuredClone(parsed.record);
  }

  /** Whether a launch of this model name finds it after a restart: not a custom one registered without `persist`. */
  async outlivesRestart(type: string, name: string): Promise<boolean> {
    const t = this.modelType(type);
    return !this.customs[t].has(name) || (await this.store.has(t, name));
  }

  /**
   * Replaces custom model `name` with a new definition of the same name, in one step
   * (`PUT /v1/model_registrations/{type}/{name}`, ours): the new one is checked whole
   * (schema, code risks, `model_uri`) before the old one goes, so a refusal keeps the old
   * one, and its owner stays. `authorize` sees the owner, as unregister's does.
   */
  async replace(type: string, name: string, body: { model?: unknown }, persist: boolean, authorizeCode: (risks: string[]) => void, authorize: (owner: string | null) => void): Promise<ModelRecord> {
    const t = this.modelType(type);
    if (this.builtins[t].has(name) && !this.customs[t].has(name)) throw new HangarError('builtin_unregister', [name], { param: 'model_name' });
    const old = this.customs[t].get(name);
    if (!old) throw new HangarError('registration_not_found', [name], { param: 'model_name' });
    authorize(this.owners.owner(t, name));
    if (body === null || typeof body !== 'object' || body.model === undefined) throw new HangarError('invalid_registration', ['model: is required: the model definition as a JSON string'], { param: 'model' });
    const parsed = parseCustomDefinition(t, body.model, this.llmLookup);
    authorizeCode(registrationCodeRisks(t, parsed.record));
    if (parsed.record.model_name !== name) throw new HangarError('invalid_registration', [`model_name: is ${parsed.record.model_name}, but this replaces ${name}; unregister it and register the new name to rename`], { param: 'model_name' });
    const key = `${t}/${foldedName(name)}`;
    if (this.pending.has(key)) throw new HangarError('registration_conflict', [name], { param: 'model_name' });
    this.pending.add(key);
    try {
      await checkModelUris(parsed, this.modelDirs);
      if (this.customs[t].get(name) !== old) throw new HangarError('registration_conflict', [`${name} (it changed meanwhile)`], { param: 'model_name' });
      // Not persisted: the old file must not bring the old definition back at the next start.
      await (persist ? this.store.save(t, name, parsed.record) : this.store.remove(t, name));
      this.customs[t].set(name, parsed.record);
    } finally {
      this.pending.delete(key);
    }
    this.logger.info({ model_type: t, model_name: name, persist }, `Replaced custom ${t} model ${name}`);
    return structuredClone(parsed.record);
  }

  /**
   * Removes a custom model and its file; built-ins: 400; unknown names: 404 (contract §2 fix).
   * `authorize` sees who registered it (null: nobody recorded) and throws to refuse:
   * the API's owner and in-use checks, made here so nothing can slip in between.
   */
  async unregister(type: string, name: string, authorize?: (owner: string | null) => void): Promise<void> {
    const t = this.modelType(type);
    if (this.builtins[t].has(name)) throw new HangarError('builtin_unregister', [name], { param: 'model_name' });
    if (!this.customs[t].has(name)) throw new HangarError('registration_not_found', [name], { param: 'model_name' });
    // Being replaced right now (replace() writes its file): one or the other, not both.
    if (this.pending.has(`${t}/${foldedName(name)}`)) throw new HangarError('registration_conflict', [`${name} (it is being replaced)`], { param: 'model_name' });
    authorize?.(this.owners.owner(t, name));
    // Out of the table before the first await: a concurrent unregister of the same name
    // then finds nothing (404), where before every one of them answered 200.
    const record = this.customs[t].get(name)!;
    this.customs[t].delete(name);
    // A built-in it hid is back in the same step, so a registration of the name meanwhile
    // meets the built-in (409), never a gap that would let both be kept.
    const hideAgain = this.shadows.reveal(t, name);
    try {
      await this.store.remove(t, name);
    } catch (err) {
      hideAgain?.();
      this.customs[t].set(name, record);
      throw err;
    }
    await this.owners.set(t, name, null);
    this.logger.info({ model_type: t, model_name: name }, `Unregistered custom ${t} model ${name}${hideAgain ? '; the built-in of that name is back' : ''}`);
  }

  /**
   * Chooses engine and spec for a launch. A name that no type knows is 404
   * `registration_not_found`, like every other lookup of a registration (Xinference
   * says 400 "Model not found" here; contract §1 moves unknown registrations to 404).
   * A name known under another type is 400 `model_type_mismatch`, which tells the
   * user the `model_type` to send: launching an embedding model with the default
   * type `LLM` is the common mistake.
   */
  resolve(selection: LaunchSelection): ResolvedModel {
    if (!selection.model_name) throw new HangarError('missing_model_name', [], { param: 'model_name' });
    const t = this.modelType(selection.model_type ?? 'LLM');
    const name = selection.model_name;
    const record = this.find(t, name);
    if (!record) {
      const other = MODEL_TYPES.find((candidate) => this.find(candidate, name) !== undefined);
      if (other) throw new HangarError('model_type_mismatch', [name, other, t, other], { param: 'model_type' });
      throw new HangarError('registration_not_found', [name], { param: 'model_name' });
    }
    return resolveLaunch(typed(t, record), selection, this.env);
  }

  private find(type: ModelType, name: string): ModelRecord | undefined {
    return this.builtins[type].get(name) ?? this.customs[type].get(name);
  }

  private modelType(type: string): ModelType {
    if (!isModelType(type)) throw new HangarError('unsupported_model_type', [type], { param: 'model_type' });
    return type;
  }

  private async detailed(type: ModelType, record: ModelRecord, isBuiltin: boolean): Promise<ListItem> {
    const copy = structuredClone(record) as unknown as ListItem & { model_specs?: Array<Record<string, unknown>> };
    copy.is_builtin = isBuiltin;
    if (type === 'flexible') {
      // No specs; Xinference marks flexible items as cached.
      copy.cache_status = await specCacheStatus(this.home, { model_uri: (record as { model_uri: string }).model_uri, model_id: null, model_hub: null, quantization: 'none' });
      return copy;
    }
    const specs = specsOf(record);
    copy.download_hubs = [...new Set(specs.flatMap((s) => (s.model_hub ? [s.model_hub] : [])))];
    copy.model_specs = await Promise.all(specs.map(async (spec) => ({ ...spec, cache_status: await specCacheStatus(this.home, spec) })));
    return copy;
  }
}

function typed(type: ModelType, record: ModelRecord): TypedRecord {
  return { type, record } as TypedRecord;
}

function compareNames(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
