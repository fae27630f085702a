import { parseKeepAlive, parseSize } from './keep-alive.js';

/**
 * On-demand loading, idle unload and the memory budget (docs/on-demand.md), from the
 * command line and the environment.
 */
export interface OnDemandConfig {
  /** `--on-demand` / HANGAR_ON_DEMAND=1: requests load the on-demand list's models (default off, as Xinference). */
  enabled: boolean;
  /** HANGAR_ON_DEMAND_WAIT_MS: how long a request waits for a load before 503 with Retry-After (default 300000). */
  waitMs: number;
  /** HANGAR_ON_DEMAND_KEEP_ALIVE: keep_alive of models loaded on demand (default 5m). */
  onDemandKeepAliveMs: number | null;
  /** HANGAR_KEEP_ALIVE: keep_alive of models launched by hand (default -1, never). */
  keepAliveMs: number | null;
  /** HANGAR_IDLE_CHECK_MS: how often idle models are looked for (default 1000). */
  idleCheckMs: number;
  /** `--memory-budget` / HANGAR_MEMORY_BUDGET: host RAM for models; null: 85% of physical memory less the service's own. */
  memoryBudgetBytes: number | null;
  /** HANGAR_GPU_MEMORY_FRACTION: each GPU's budget as a share of its memory (default 0.9). */
  gpuMemoryFraction: number;
}

/** Node's timers take at most 2^31 - 1 ms (24.8 days); a longer one fires after 1 ms, so "wait very long" meant "never wait". */
const MAX_TIMER_MS = 2_147_483_647;

export function onDemandFromEnv(env: NodeJS.ProcessEnv, flags: { onDemand?: boolean; memoryBudget?: string | undefined } = {}): OnDemandConfig {
  const text = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  const keepAlive = (name: string, fallback: number | null): number | null => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    try {
      return parseKeepAlive(raw);
    } catch (err) {
      throw new Error(`${name}: ${(err as Error).message}`);
    }
  };
  const number = (name: string, fallback: number, min: number, max = Number.POSITIVE_INFINITY): number => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    return value;
  };
  const flag = text('HANGAR_ON_DEMAND')?.toLowerCase();
  if (flag !== undefined && !['0', '1', 'true', 'false', 'on', 'off', 'yes', 'no'].includes(flag)) {
    throw new Error(`HANGAR_ON_DEMAND must be 1 or 0 (true/false, on/off), got ${JSON.stringify(env.HANGAR_ON_DEMAND)}`);
  }
  const budget = flags.memoryBudget ?? text('HANGAR_MEMORY_BUDGET');
  return {
    enabled: flags.onDemand === true || ['1', 'true', 'on', 'yes'].includes(flag ?? ''),
    waitMs: number('HANGAR_ON_DEMAND_WAIT_MS', 300_000, 0, MAX_TIMER_MS),
    onDemandKeepAliveMs: keepAlive('HANGAR_ON_DEMAND_KEEP_ALIVE', 300_000),
    keepAliveMs: keepAlive('HANGAR_KEEP_ALIVE', null),
    idleCheckMs: number('HANGAR_IDLE_CHECK_MS', 1000, 10, MAX_TIMER_MS),
    memoryBudgetBytes: budget === undefined ? null : memoryBudget(budget, flags.memoryBudget !== undefined ? '--memory-budget' : 'HANGAR_MEMORY_BUDGET'),
    gpuMemoryFraction: number('HANGAR_GPU_MEMORY_FRACTION', 0.9, 0.01, 1),
  };
}

/** Less than any runtime takes: a budget this small refuses every launch. */
const SMALLEST_BUDGET = 16 * 1024 * 1024;

/**
 * The memory budget: a size, and one that can hold a model. `16` or `8iB` (a typo) was
 * taken as bytes, and every launch was then refused with "0 MiB of the 0 MiB budget is free".
 */
function memoryBudget(value: string, what: string): number {
  const bytes = parseSize(value, what);
  if (bytes < SMALLEST_BUDGET) throw new Error(`${what} is ${bytes} bytes, less than any model takes (at least 16MiB); give a unit, such as ${value.trim()}GiB`);
  return bytes;
}
