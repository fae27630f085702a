import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import { localModelPath } from './model-uri.js';
import type { FlatSpec } from './model-record.js';

/**
 * `cache_status` of one spec: are its weights on local disk? The rule, in order:
 *  1. a `model_uri` (custom models): the file or folder exists;
 *  2. no `model_id` (pocketsphinx, espeak-ng, tesseract ship their own models): true;
 *  3. Hugging Face: `<home>/cache/huggingface/models--<org>--<name>/snapshots` holds a
 *     snapshot with something in it (the layout snapshot_download writes with the
 *     runtime's cache_dir), or the same under `hub/`;
 *  4. ModelScope: `<home>/cache/modelscope/models/<org>/<name>` exists (its layout
 *     with `MODELSCOPE_CACHE=<home>/cache/modelscope`).
 * A snapshot folder says the repository was fetched, not that every file of every
 * quantization is there; Xinference answers the same approximation for gguf repos.
 */
export async function specCacheStatus(home: string, spec: Pick<FlatSpec, 'model_uri' | 'model_id' | 'model_hub' | 'quantization'>): Promise<boolean> {
  if (spec.model_uri) {
    const local = localModelPath(spec.model_uri);
    return local !== null && (await exists(local));
  }
  if (!spec.model_id) return true;
  // Some hub ids carry the quantization, e.g. `...-GPTQ-{quantization}`.
  const repo = spec.model_id.replace('{quantization}', spec.quantization);
  const cache = path.join(home, 'cache');
  if (spec.model_hub === 'modelscope') {
    return exists(path.join(cache, 'modelscope', 'models', ...repo.split('/')));
  }
  // Where the runtime's snapshot_download(cache_dir=<home>/cache/huggingface) puts it,
  // or under hub/ as HF_HOME-style tools do.
  const folder = `models--${repo.split('/').join('--')}`;
  return (await hasSnapshot(path.join(cache, 'huggingface', folder, 'snapshots'))) || hasSnapshot(path.join(cache, 'huggingface', 'hub', folder, 'snapshots'));
}

/** A snapshot folder with something in it: a download that failed before its first file leaves an empty one. */
async function hasSnapshot(snapshots: string): Promise<boolean> {
  for (const commit of await readdir(snapshots).catch(() => [])) {
    if ((await readdir(path.join(snapshots, commit)).catch(() => [])).length > 0) return true;
  }
  return false;
}

async function exists(target: string): Promise<boolean> {
  try {
    await access(target);
    return true;
  } catch {
    return false;
  }
}
