import { checkModelDir } from '../config/model-dirs.js';
import { parseCustomDefinition, type BuiltinLlmLookup } from './custom-definition.js';
import type { ModelRecord, TypedRecord } from './model-record.js';
import type { ModelType } from './model-type.js';
import { existingModelUriPath } from './model-uri.js';
import type { RegistryLogger } from './registry-logger.js';

/** What reading a stored registration needs of the registry. */
export interface StoredContext {
  llmLookup: BuiltinLlmLookup;
  modelDirs: readonly string[] | null;
  logger: RegistryLogger;
}

/**
 * A persisted registration goes through the same validation as a new one. It is
 * skipped, with a warning naming the file, when it is invalid, when its file name
 * is not `<model_name>.json` (unregister could not find it), or when another file
 * already gave its name (`loaded`). One that a built-in now has the name of (the
 * catalog grew) loads, and hides that built-in (builtin-shadows.ts). A `model_uri`
 * that does not exist only warns: the disk may be mounted later, and the launch will
 * say what is missing.
 */
export async function storedRecord(
  type: ModelType,
  file: string,
  definition: unknown,
  loaded: { [T in ModelType]: Map<string, ModelRecord> },
  { llmLookup, modelDirs, logger }: StoredContext,
): Promise<ModelRecord | null> {
  let parsed: TypedRecord;
  try {
    parsed = parseCustomDefinition(type, definition, llmLookup);
  } catch (err) {
    logger.warn({ file, err }, `Skipping custom model file ${file}: ${(err as Error).message}`);
    return null;
  }
  const name = parsed.record.model_name;
  if (!file.endsWith(`/${name}.json`)) {
    logger.warn({ file }, `Skipping custom model file ${file}: it holds model_name ${name}; name the file ${name}.json`);
    return null;
  }
  if (loaded[type].has(name)) {
    logger.warn({ file }, `Skipping custom model file ${file}: another file already registered ${type} model ${name}`);
    return null;
  }
  try {
    await checkModelUris(parsed, modelDirs);
  } catch (err) {
    logger.warn({ file, err }, `Custom model ${name} from ${file}: ${(err as Error).message}`);
  }
  return parsed.record;
}

/** Every `model_uri` of a registration must be an absolute path or file:// URI that exists now (contract §2). */
export async function checkModelUris({ type, record }: TypedRecord, modelDirs: readonly string[] | null): Promise<void> {
  const check = async (uri: string, field: string): Promise<void> => checkModelDir(await existingModelUriPath(uri, field), modelDirs, uri, field);
  if (type === 'LLM' || type === 'embedding' || type === 'rerank') {
    for (const [i, spec] of record.model_specs.entries()) {
      if (spec.model_uri) await check(spec.model_uri, `model_specs.${i}.model_uri`);
    }
  } else if (record.model_uri) {
    await check(record.model_uri, 'model_uri');
  }
}
