import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { HangarError } from '../errors/hangar-error.js';

/**
 * `--model-dirs DIR[,DIR...]` / HANGAR_MODEL_DIRS (docs/auth.md, "Where models may
 * come from"): when set, a registration's `model_uri` and a launch's `model_path`
 * must resolve, links and `..` followed, inside one of these folders. Hub downloads
 * and the cache are not paths a caller gives, so they are always allowed.
 */
export function parseModelDirs(raw: string | undefined): string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  return raw.split(',').map((d) => d.trim()).filter((d) => d.length > 0).map((dir) => {
    if (!path.isAbsolute(dir)) throw new Error(`--model-dirs: ${JSON.stringify(dir)} is not an absolute path`);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`--model-dirs: ${dir} is not a folder`);
    return realpathSync(dir);
  });
}

/**
 * Refuses a local path outside the model folders (400 naming the setting). The path
 * is resolved as the runtime will open it: its deepest existing part through
 * realpath (so a link pointing out is out), the rest normalised (so `..` is too).
 */
export function checkModelDir(local: string, dirs: readonly string[] | null, shown: string, field: string): void {
  if (dirs === null) return;
  const resolved = resolveThroughLinks(path.resolve(local));
  if (dirs.some((dir) => resolved === dir || resolved.startsWith(dir + path.sep))) return;
  throw new HangarError('model_dir_refused', [shown, dirs.join(', ')], { param: field });
}

function resolveThroughLinks(target: string): string {
  let existing = target;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
  return path.join(realpathSync(existing), ...rest);
}
