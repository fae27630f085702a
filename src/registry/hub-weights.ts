import { hubOffline } from '../config/hub-settings.js';
import { ggufFileName, ggufPartNames, type ResolvedModel } from './resolved-model.js';
import { MAX_GGUF_HEADER_BYTES, readGgufMetadata } from './gguf-header.js';
import { HubClient } from './hub/hub-client.js';
import { configShape, ggufShapeKnown, ggufShapeOf, isConsolidated, loadedByTransformers, type ModelShape } from './weight-files.js';

/** Where the Hugging Face hub is asked, and how (the launch's `envs` win over the service's environment). */
export interface HubAccess {
  env: Record<string, string | undefined>;
  /** How long to wait for the hub before estimating from the catalog instead. */
  timeoutMs: number;
}

/** One file of a repo as the hub's tree lists it. */
interface TreeEntry {
  type?: string;
  path?: string;
  size?: number;
  lfs?: { size?: number };
}

/** safetensors dtype names in config.json's `torch_dtype` (or `dtype`), by bytes per parameter. */
const CONFIG_DTYPE_BYTES: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2, float64: 8, float8_e4m3fn: 1 };
const OTHER_WEIGHTS = /\.(bin|pt|pth|ckpt)$/i;
/** What was learnt of a repo at a revision, for a while: an on-demand model is loaded again and again. */
const remembered = new Map<string, { shape: ModelShape | null; until: number }>();
const REMEMBER_MS = 10 * 60_000;

/**
 * A hub model's shape before anything is downloaded (docs/on-demand.md, "Memory
 * estimate"): the weight files' sizes from the hub's file listing
 * (`/api/models/{id}/tree/{revision}`, the call huggingface_hub's snapshot_download
 * makes), and layers, heads and dtype from its config.json. Hugging Face only (the
 * ModelScope path keeps the catalog's size); null where the hub is not to be asked
 * (`HF_HUB_OFFLINE=1`), does not answer in time, or lists no weights.
 */
export async function hubShape(resolved: ResolvedModel, access: HubAccess): Promise<ModelShape | null> {
  const { model_id: id, model_hub: hub } = resolved.load;
  if (!id || (hub !== undefined && hub !== 'huggingface')) return null;
  const { env } = access;
  if (hubOffline(env)) return null;
  const endpoint = (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
  const revision = resolved.load.model_revision ?? 'main';
  const key = `${endpoint} ${id} ${revision} ${resolved.runtimeEngine} ${resolved.load.quantization ?? ''}`;
  const known = remembered.get(key);
  if (known && known.until > Date.now()) return known.shape;
  const token = env.HF_TOKEN || env.HUGGING_FACE_HUB_TOKEN;
  const get = async (url: string): Promise<unknown> => {
    const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(access.timeoutMs), redirect: 'follow' });
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    return res.json();
  };
  const repo = id.split('/').map(encodeURIComponent).join('/');
  const tree = await get(`${endpoint}/api/models/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`);
  if (!Array.isArray(tree)) return null;
  const files = (tree as TreeEntry[]).filter((e) => e.type !== 'directory' && typeof e.path === 'string').map((e) => ({ path: e.path!, size: e.lfs?.size ?? e.size ?? 0 }));
  // A listing whose sizes are no byte counts (`"abc"`, -1) says nothing: the catalog's size serves.
  if (!files.every((f) => Number.isSafeInteger(f.size) && f.size >= 0)) return null;
  let shape: ModelShape | null;
  if (resolved.runtimeEngine === 'llama_cpp') {
    const chosen = ggufChosen(files, resolved);
    shape = chosen ? await ggufHubShape(id, revision, chosen, access) : null;
  } else {
    shape = await torchShape(files, () => get(`${endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/config.json`));
  }
  remembered.set(key, { shape, until: Date.now() + REMEMBER_MS });
  return shape;
}

/**
 * A Transformers checkpoint: the safetensors files' bytes (a Mistral-style
 * `consolidated` copy is left out: the engine reads one of the two), else the other
 * weight files'; the parameter count from those bytes and the config's dtype.
 */
async function torchShape(listed: Array<{ path: string; size: number }>, config: () => Promise<unknown>): Promise<ModelShape | null> {
  const files = listed.filter((f) => loadedByTransformers(f.path));
  const safetensors = files.filter((f) => f.path.endsWith('.safetensors'));
  const chosen = safetensors.length > 0 ? (safetensors.some((f) => !isConsolidated(f.path)) ? safetensors.filter((f) => !isConsolidated(f.path)) : safetensors) : files.filter((f) => OTHER_WEIGHTS.test(f.path));
  const fileBytes = chosen.reduce((sum, f) => sum + f.size, 0);
  if (fileBytes === 0) return null;
  const parsed = await config().catch(() => null);
  const json = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  const dtype = json?.torch_dtype ?? json?.dtype ?? (json?.text_config as Record<string, unknown> | undefined)?.torch_dtype;
  const bytesPerParameter = (typeof dtype === 'string' ? CONFIG_DTYPE_BYTES[dtype] : undefined) ?? 2;
  return { parameters: Math.round(fileBytes / bytesPerParameter), bytesPerParameter, fileBytes, ...configShape(json) };
}

/**
 * A GGUF quantization's shape: its files' bytes, and layers, heads and context from the
 * header at the start of its (first) file, read over an HTTP range up to the
 * tokenizer's keys (a few KiB), within the lookup's time. A header that cannot be read
 * leaves the bytes alone (no KV cache term: the estimate errs low, as before).
 */
async function ggufHubShape(repo: string, revision: string, chosen: { bytes: number; first: string }, access: HubAccess): Promise<ModelShape> {
  const limit = AbortSignal.timeout(access.timeoutMs);
  try {
    const source = await new HubClient({ env: access.env, timeoutMs: access.timeoutMs }).fileStart(repo, revision, chosen.first, MAX_GGUF_HEADER_BYTES, limit);
    try {
      return ggufShapeOf(await readGgufMetadata(source, MAX_GGUF_HEADER_BYTES, ggufShapeKnown), chosen.bytes);
    } finally {
      source.close();
    }
  } catch {
    return ggufShapeOf(new Map(), chosen.bytes);
  }
}

/** The GGUF files the launch will fetch (its quantization's, all parts of a split one): their bytes and the first's name; null when none matches. */
function ggufChosen(files: Array<{ path: string; size: number }>, resolved: ResolvedModel): { bytes: number; first: string } | null {
  const ggufs = files.filter((f) => f.path.toLowerCase().endsWith('.gguf'));
  const of = (picked: Array<{ path: string; size: number }>) => (picked.length > 0 ? { bytes: picked.reduce((sum, f) => sum + f.size, 0), first: picked[0]!.path } : null);
  // A split file is all its parts: its single-file name is only the first (a 9-part
  // quantization was estimated at one ninth of its size).
  const parts = ggufPartNames(resolved.load);
  const found = parts.flatMap((name) => ggufs.filter((f) => f.path === name));
  if (found.length > 0) return of(found);
  const wanted = ggufFileName(resolved.load);
  const exact = wanted ? ggufs.find((f) => f.path === wanted) : undefined;
  if (exact) return of([exact]);
  const q = (resolved.load.quantization ?? '').toLowerCase();
  const matching = q ? ggufs.filter((f) => f.path.toLowerCase().includes(q)) : [];
  const split = matching.filter((f) => /-\d+-of-\d+\.gguf$/i.test(f.path)).sort((a, b) => a.path.localeCompare(b.path));
  return of(split.length > 0 ? split : matching.slice(0, 1));
}
