import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../config/config.js';
import { flattenBuiltin } from './flatten.js';
import type { ModelRecord } from './model-record.js';
import { MODEL_TYPES, registryFolder, type ModelType } from './model-type.js';
import { describeIssues } from './schema-issues.js';

/**
 * The catalog is data, one small JSON file per family at
 * `src/registry/builtin/<llm|embedding|...>/<model_name>.json` (style.md: no 35,000-line
 * catalog file). It is read from `src/` in both the source tree and a build, since
 * `packageRoot` is the same from both and tsc does not copy JSON files to `dist/`.
 */
export const DEFAULT_BUILTIN_DIR = path.join(packageRoot, 'src', 'registry', 'builtin');

export type BuiltinCatalog = { [T in ModelType]: Map<string, ModelRecord> };

/**
 * Reads and flattens every built-in file. The catalog ships with the code, so a bad
 * file is a bug: it fails the start with the file's path and the field at fault
 * (unlike a user's custom file, which is only a warning).
 */
export async function loadBuiltinCatalog(dir: string = DEFAULT_BUILTIN_DIR): Promise<BuiltinCatalog> {
  const catalog = Object.fromEntries(MODEL_TYPES.map((t) => [t, new Map<string, ModelRecord>()])) as BuiltinCatalog;
  for (const type of MODEL_TYPES) {
    if (type === 'flexible') continue; // custom only (notes §8.1)
    const folder = path.join(dir, registryFolder(type));
    const files = (await readdir(folder).catch(missingFolderIsEmpty)).filter((f) => f.endsWith('.json')).sort();
    for (const file of files) {
      const filePath = path.join(folder, file);
      const record = await readBuiltinFile(type, filePath);
      if (`${record.model_name}.json` !== file) {
        throw new Error(`Built-in model file ${filePath} holds model_name ${record.model_name}; name the file ${record.model_name}.json`);
      }
      catalog[type].set(record.model_name, record);
    }
  }
  return catalog;
}

async function readBuiltinFile(type: ModelType, filePath: string): Promise<ModelRecord> {
  try {
    return flattenBuiltin(type, JSON.parse(await readFile(filePath, 'utf8')));
  } catch (err) {
    const why = err instanceof z.ZodError ? describeIssues(err).message : (err as Error).message;
    throw new Error(`Built-in model file ${filePath} is invalid: ${why}`, { cause: err });
  }
}

function missingFolderIsEmpty(err: NodeJS.ErrnoException): string[] {
  if (err.code === 'ENOENT') return [];
  throw err;
}
