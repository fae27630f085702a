import type { MemoryEstimate } from '../registry/index.js';
import type { MemoryCharge } from './memory-charge.js';
import type { ModelInstance } from './model-instance.js';

export type { MemoryCharge } from './memory-charge.js';

/** The budgets: host RAM for CPU replicas and runtimes, and each GPU's (docs/on-demand.md, "Memory budget"). */
export interface MemoryBudgets {
  hostBytes: number;
  /** By GPU index; a GPU without an entry has no budget to check. */
  gpuBytes: Record<number, number>;
}

/** One model's share of a device, as the refusal and `GET /v1/memory` name it. */
export interface Holder {
  model_uid: string;
  bytes: number;
}

export interface DeviceUse {
  device: string;
  budget_bytes: number;
  used_bytes: number;
  free_bytes: number;
  models: Holder[];
}

/** On a GPU, the CUDA context and allocator slack each replica adds to its weights and cache. */
export const CUDA_CONTEXT_BYTES = 512 * 1024 * 1024;
/** vLLM's default share of each GPU it runs on (its `gpu_memory_utilization`). */
const VLLM_DEFAULT_UTILIZATION = 0.9;

/**
 * What an instance of replicas will hold. A CPU replica holds its whole estimate in
 * host RAM; a GPU replica holds its runtime's overhead there and its weights and
 * cache (plus a CUDA context) spread over its GPUs. vLLM takes its
 * `gpu_memory_utilization` of each GPU, whatever the model's size.
 */
export function chargeOf(estimate: MemoryEstimate, replicaGpus: number[][], engine: string, kwargs: Record<string, unknown>, budgets: MemoryBudgets): MemoryCharge {
  const charge: MemoryCharge = { host: 0, gpus: {} };
  for (const gpus of replicaGpus) {
    if (gpus.length === 0) {
      charge.host += estimate.bytes;
      continue;
    }
    charge.host += estimate.overhead;
    for (const gpu of gpus) {
      let bytes = (estimate.weights + estimate.kv_cache) / gpus.length + CUDA_CONTEXT_BYTES;
      if (engine === 'vllm') {
        const share = typeof kwargs.gpu_memory_utilization === 'number' ? kwargs.gpu_memory_utilization : VLLM_DEFAULT_UTILIZATION;
        const total = budgets.gpuBytes[gpu];
        if (total !== undefined) bytes = Math.max(bytes, share * total);
      }
      charge.gpus[gpu] = (charge.gpus[gpu] ?? 0) + Math.round(bytes);
    }
  }
  return charge;
}

/**
 * What an admitted instance holds now: its charge, or what its runtimes measure
 * (resident set) where that is more, so a model that grew past its estimate is
 * counted as it is.
 */
export function heldBy(instance: ModelInstance): MemoryCharge {
  const charge = instance.charge ?? { host: 0, gpus: {} };
  let measured = 0;
  for (const replica of instance.replicas) measured += bytesOrZero(replica.runtime?.stats?.rssBytes);
  // Math.max with a NaN is NaN, which every later comparison drops: a model would hold nothing.
  return { host: Math.max(bytesOrZero(charge.host), measured), gpus: charge.gpus };
}

function bytesOrZero(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

/** The devices' budgets and what each holder holds, for refusals and `GET /v1/memory`. */
export function deviceUse(budgets: MemoryBudgets, holders: ReadonlyArray<{ uid: string; held: MemoryCharge }>): DeviceUse[] {
  const out: DeviceUse[] = [];
  const describe = (device: string, budget: number, pick: (c: MemoryCharge) => number): void => {
    const models = holders.map((h) => ({ model_uid: h.uid, bytes: pick(h.held) })).filter((h) => h.bytes > 0).sort((a, b) => b.bytes - a.bytes);
    const used = models.reduce((sum, m) => sum + m.bytes, 0);
    out.push({ device, budget_bytes: budget, used_bytes: used, free_bytes: Math.max(0, budget - used), models });
  };
  describe('cpu', budgets.hostBytes, (c) => c.host);
  for (const [index, budget] of Object.entries(budgets.gpuBytes)) describe(`gpu:${index}`, budget, (c) => c.gpus[Number(index)] ?? 0);
  return out;
}

/** The first device the charge does not fit on, given what the others hold; null when it fits everywhere. */
export function overBudget(budgets: MemoryBudgets, charge: MemoryCharge, holders: ReadonlyArray<{ uid: string; held: MemoryCharge }>): DeviceUse & { need: number } | null {
  for (const use of deviceUse(budgets, holders)) {
    const need = use.device === 'cpu' ? charge.host : (charge.gpus[Number(use.device.slice(4))] ?? 0);
    if (need > 0 && need > use.free_bytes) return { ...use, need };
  }
  return null;
}

export function sizeText(bytes: number): string {
  const gib = bytes / 2 ** 30;
  return gib >= 1 ? `${gib.toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}
