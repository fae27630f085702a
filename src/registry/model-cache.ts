import { readdir, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** One repository in the weights cache, as huggingface_hub or ModelScope left it. */
export interface CacheEntry {
  /** `huggingface:Qwen/Qwen2.5-0.5B-Instruct`: the hub and the repository, the key of the other cache routes. */
  model_version: string;
  model_id: string;
  hub: 'huggingface' | 'modelscope';
  /** The folder the entry occupies (deleting the entry deletes it). */
  path: string;
  /** Bytes on disk (the hub's blobs once; its snapshot links are not counted twice). */
  size: number;
}

/**
 * The weights cache under `<home>/cache` (docs/registry.md, "Cache"): the layouts
 * huggingface_hub writes with `cache_dir=<home>/cache/huggingface` (what the runtime's
 * hub_download.py passes) and ModelScope with `MODELSCOPE_CACHE=<home>/cache/modelscope`
 * (cache-status.ts reads the same layouts). Custom models registered with a
 * `model_uri` are the user's own files and never part of it.
 */
export class ModelCache {
  constructor(private readonly home: string) {}

  /** `<home>/cache`: the runtimes' download cache. */
  get root(): string {
    return path.join(this.home, 'cache');
  }

  async list(): Promise<CacheEntry[]> {
    const entries: CacheEntry[] = [];
    // The runtime hands `<home>/cache/huggingface` to snapshot_download as its cache_dir
    // (repositories right in it); `hub/` under it is where HF_HOME-style tools put them.
    for (const hfCache of [path.join(this.root, 'huggingface'), path.join(this.root, 'huggingface', 'hub')]) {
      for (const name of await folders(hfCache)) {
        if (!name.startsWith('models--')) continue;
        const repo = name.slice('models--'.length).split('--').join('/');
        const folder = path.join(hfCache, name);
        entries.push({ model_version: `huggingface:${repo}`, model_id: repo, hub: 'huggingface', path: folder, size: await sizeOf(folder) });
      }
    }
    const msModels = path.join(this.root, 'modelscope', 'models');
    for (const org of await folders(msModels)) {
      for (const name of await folders(path.join(msModels, org))) {
        const repo = `${org}/${name}`;
        const folder = path.join(msModels, org, name);
        entries.push({ model_version: `modelscope:${repo}`, model_id: repo, hub: 'modelscope', path: folder, size: await sizeOf(folder) });
      }
    }
    return entries.sort((a, b) => a.model_version.localeCompare(b.model_version));
  }

  async find(modelVersion: string): Promise<CacheEntry | null> {
    return (await this.list()).find((e) => e.model_version === modelVersion) ?? null;
  }

  /** Every file of an entry (absolute paths; links listed as themselves, not followed). */
  async files(entry: CacheEntry): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const item of await readdir(dir, { withFileTypes: true })) {
        const p = path.join(dir, item.name);
        if (item.isDirectory()) await walk(p);
        else out.push(p);
      }
    };
    await walk(entry.path);
    return out.sort();
  }

  /** Deletes an entry's folder. The path is checked to lie inside the cache, links resolved. */
  async remove(entry: CacheEntry): Promise<void> {
    const root = await realpath(this.root);
    const target = await realpath(entry.path);
    if (!target.startsWith(root + path.sep)) throw new Error(`refusing to delete ${entry.path}: it resolves outside ${this.root}`);
    await rm(target, { recursive: true, force: true });
  }
}

async function folders(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch {
    return [];
  }
}

/** Bytes of regular files under a folder; symbolic links (the hub's snapshots) count nothing. */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const item of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, item.name);
    if (item.isDirectory()) total += await sizeOf(p);
    else if (item.isFile()) total += (await stat(p)).size;
  }
  return total;
}
