import { HangarError } from '../../errors/hangar-error.js';
import { estimateMemory, estimateOfShape, HubClient, parseHubId, type GgufQuantization, type MemoryEstimate, type ResolvedModel } from '../../registry/index.js';
import { ggufQuantizations, pickQuantization } from '../../registry/hub/gguf-files.js';
import type { DeviceUse } from '../../supervisor/memory-budget.js';

export interface HubSearchQuery {
  search: string;
  format?: 'gguf' | 'pytorch' | undefined;
  task?: string | undefined;
  limit: number;
}

interface Fit {
  memory_estimate: number;
  /** Fits the largest device budget (nothing else loaded); `fits_now`: fits what is free there now. */
  fits: boolean;
  fits_now: boolean;
}

export interface HubSearchResult {
  id: string;
  /** What to launch: POST /v1/models {"model_name": this} (with `:<quantization>` for a GGUF file). */
  model_name: string;
  downloads: number | null;
  likes: number | null;
  pipeline_tag: string | null;
  parameters: number | null;
  gguf: Array<{ quantization: string; files: string[]; bytes: number } & Fit>;
  /** The quantization a launch without a tag gets. */
  default_quantization: string | null;
  pytorch: ({ bytes: number } & Fit) | null;
  /** Why sizes are missing for this result (the repo's listing failed); the others are still shown. */
  error?: string;
}

/**
 * `GET /v1/hub/models` (docs/registry.md, "Hub search"): the hub's own search
 * (`/api/models?search=&filter=&pipeline_tag=&sort=downloads`), each result's files
 * and sizes from its listing, and the memory estimate of the launch it would be with
 * "fits" against the memory budget. A hub out of reach is a 503 naming it.
 */
interface SearchDeps {
  env: Record<string, string | undefined>;
  timeoutMs: number;
  cacheDir: string;
  devices: DeviceUse[];
}

export async function searchHub(query: HubSearchQuery, deps: SearchDeps): Promise<{ hub: string; data: HubSearchResult[] }> {
  const client = new HubClient({ env: deps.env, timeoutMs: deps.timeoutMs });
  const params = new URLSearchParams({ search: query.search, sort: 'downloads', direction: '-1', limit: String(query.limit) });
  if (query.format === 'gguf') params.append('filter', 'gguf');
  if (query.format === 'pytorch') params.append('filter', 'safetensors');
  if (query.task) params.set('pipeline_tag', query.task);
  const found = await client.search(params);
  // The hub's answer is not trusted: ids that are no repository id (`../../etc`) would be
  // asked for next and offered as launches, and a hub that ignores `limit` would have
  // each of its thousands of results asked for.
  const items = found
    .filter((f): f is Record<string, unknown> => typeof f === 'object' && f !== null && typeof (f as { id?: unknown }).id === 'string')
    .filter((f) => isRepoId(f.id as string))
    .slice(0, query.limit);
  const onGpu = deps.devices.some((d) => d.device !== 'cpu');
  const data = await Promise.all(items.map((item) => describe(item, client, query, deps, onGpu)));
  return { hub: client.endpoint, data };
}

async function describe(item: Record<string, unknown>, client: HubClient, query: HubSearchQuery, deps: SearchDeps, onGpu: boolean): Promise<HubSearchResult> {
  const id = item.id as string;
  const total = (item.safetensors as { total?: unknown } | undefined)?.total;
  const result: HubSearchResult = {
    id,
    model_name: `hf.co/${id}`,
    downloads: count(item.downloads),
    likes: count(item.likes),
    pipeline_tag: typeof item.pipeline_tag === 'string' ? item.pipeline_tag : null,
    parameters: typeof total === 'number' ? total : null,
    gguf: [],
    default_quantization: null,
    pytorch: null,
  };
  try {
    const info = await client.repoInfo(id);
    const offered = query.format === 'pytorch' ? [] : ggufQuantizations(info.files);
    // A quantization another file carries too is offered by its file's name: a tag of the
    // quantization alone is ambiguous, and its launch refused (gguf-files.ts).
    const tagOf = (q: GgufQuantization) => (q.sameName?.length ? q.files[0]!.split('/').pop()! : q.quantization);
    result.gguf = offered.map((q) => ({ quantization: tagOf(q), files: q.files, bytes: q.bytes, ...fit(ggufEstimate(q, id, onGpu), deps.devices) }));
    result.default_quantization = defaultTag(offered, id, tagOf);
    const weights = info.files.filter((f) => f.path.endsWith('.safetensors') && !f.path.includes('/'));
    if (query.format !== 'gguf' && weights.length > 0) {
      const estimate = await estimateMemory({ resolved: torchModel(id, info.sha), engineKwargs: {}, onGpu, cacheDir: deps.cacheDir, hub: { env: deps.env, timeoutMs: deps.timeoutMs } });
      result.pytorch = { bytes: weights.reduce((sum, f) => sum + f.size, 0), ...fit(estimate, deps.devices) };
    }
  } catch (err) {
    if (!(err instanceof HangarError)) throw err;
    result.error = err.message;
  }
  return result;
}

/** A GGUF file's estimate as the launch's would be before its header is read: the file, and llama.cpp's runtime. */
function ggufEstimate(q: GgufQuantization, id: string, onGpu: boolean): MemoryEstimate {
  const resolved: ResolvedModel = { modelType: 'LLM', modelName: id, engine: 'llama.cpp', runtimeEngine: 'llama_cpp', cpuBound: true, abilities: [], load: { model_id: id, quantization: q.quantization, launcher_args: {} }, description: {} };
  return estimateOfShape({ parameters: null, bytesPerParameter: 2, fileBytes: q.bytes, layers: null, kvHeads: null, headDim: null, contextLength: null }, 'hub', resolved, {}, onGpu);
}

function torchModel(id: string, sha: string): ResolvedModel {
  return {
    modelType: 'LLM', modelName: id, engine: 'Transformers', runtimeEngine: 'transformers', cpuBound: true, abilities: [],
    load: { model_id: id, model_hub: 'huggingface', model_revision: sha, model_format: 'pytorch', quantization: 'none', launcher_args: {} }, description: {},
  };
}

function fit(estimate: MemoryEstimate, devices: DeviceUse[]): Fit {
  // Where the launch would run: a GPU when there is one (n_gpu auto), else the host.
  const candidates = devices.some((d) => d.device !== 'cpu') ? devices.filter((d) => d.device !== 'cpu') : devices;
  const budget = Math.max(0, ...candidates.map((d) => d.budget_bytes));
  const free = Math.max(0, ...candidates.map((d) => d.free_bytes));
  return { memory_estimate: estimate.bytes, fits: estimate.bytes <= budget, fits_now: estimate.bytes <= free };
}

/** A count the hub gives: a whole number from 0, else null (not `1e308` or `-1`). */
function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** An `<org>/<repo>` a launch by hub id takes, without a tag. */
function isRepoId(id: string): boolean {
  try {
    return id.includes('/') && parseHubId(id)?.tag === null;
  } catch {
    return false;
  }
}

/** The quantization a launch without a tag gets, by the tag that names it; null where none is (or it is ambiguous). */
function defaultTag(offered: readonly GgufQuantization[], repo: string, tagOf: (q: GgufQuantization) => string): string | null {
  if (offered.length === 0) return null;
  try {
    return tagOf(pickQuantization(offered, null, repo));
  } catch {
    return null;
  }
}
