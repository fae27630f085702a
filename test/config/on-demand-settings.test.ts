import { describe, expect, it } from 'vitest';
import { keepAliveText, parseKeepAlive, parseSize } from '../../src/config/keep-alive.js';
import { onDemandFromEnv } from '../../src/config/on-demand-settings.js';

describe('keep_alive', () => {
  it('reads Ollama\'s forms: durations, seconds, 0 and negatives for never', () => {
    expect(parseKeepAlive('5m')).toBe(300_000);
    expect(parseKeepAlive('1h30m')).toBe(5_400_000);
    expect(parseKeepAlive('250ms')).toBe(250);
    expect(parseKeepAlive('1.5s')).toBe(1500);
    // Go's durations, as Ollama reads them: a plus sign, micro- and nanoseconds, and -0s is 0 (unload at once), not never.
    expect(parseKeepAlive('+5m')).toBe(300_000);
    expect(parseKeepAlive('500us')).toBe(1);
    expect(parseKeepAlive('2000000ns')).toBe(2);
    expect(parseKeepAlive('-0s')).toBe(0);
    expect(parseKeepAlive('-1m')).toBeNull();
    expect(parseKeepAlive(30)).toBe(30_000);
    expect(parseKeepAlive('30')).toBe(30_000);
    expect(parseKeepAlive(0)).toBe(0);
    expect(parseKeepAlive('0')).toBe(0);
    expect(parseKeepAlive(-1)).toBeNull();
    expect(parseKeepAlive('-1m')).toBeNull();
    expect(parseKeepAlive('never')).toBeNull();
    // Past what a clock counts: never, not Infinity.
    expect(parseKeepAlive(1e308)).toBeNull();
    expect(parseKeepAlive('99999999999h')).toBeNull();
    expect(parseKeepAlive('1000d')).toBe(86_400_000_000);
  });

  it('refuses what is not a duration, naming what it got', () => {
    for (const bad of ['soon', '5 minutes', '5m garbage', 'm5', '', true, null, {}, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => parseKeepAlive(bad), String(bad)).toThrow(/keep_alive must be a duration/);
    }
  });

  it('prints durations as people write them', () => {
    expect(keepAliveText(null)).toBe('never');
    expect(keepAliveText(0)).toBe('0ms');
    expect(keepAliveText(300_000)).toBe('5m');
    expect(keepAliveText(5_400_000)).toBe('1h30m');
    expect(keepAliveText(61_000)).toBe('1m1s');
  });
});

describe('memory sizes', () => {
  it('takes bytes, binary units and decimal ones', () => {
    expect(parseSize('1024', 'x')).toBe(1024);
    expect(parseSize('20GiB', 'x')).toBe(20 * 2 ** 30);
    expect(parseSize('20G', 'x')).toBe(20 * 2 ** 30);
    expect(parseSize('512MiB', 'x')).toBe(512 * 2 ** 20);
    expect(parseSize('1.5GB', 'x')).toBe(1.5e9);
    expect(parseSize(' 2 tib ', 'x')).toBe(2 * 2 ** 40);
  });

  it('refuses nonsense and zero, naming the setting', () => {
    expect(() => parseSize('lots', '--memory-budget')).toThrow(/--memory-budget must be bytes or a size such as 20GiB/);
    expect(() => parseSize('-5GiB', '--memory-budget')).toThrow(/--memory-budget/);
    expect(() => parseSize('0', 'HANGAR_MEMORY_BUDGET')).toThrow(/more than 0 bytes/);
    // A unit typo, a fraction of a byte, past any memory: each was a size before (8 bytes, 2 bytes, "more than 0").
    expect(() => parseSize('8iB', 'x')).toThrow(/must be bytes or a size/);
    expect(() => parseSize('1.5', 'x')).toThrow(/whole number of bytes/);
    expect(() => parseSize('99999999999T', 'x')).toThrow(/past any memory/);
    expect(parseSize('8b', 'x')).toBe(8);
  });

  it('refuses a memory budget smaller than any model, saying to give a unit', () => {
    expect(() => onDemandFromEnv({}, { memoryBudget: '16' })).toThrow(/--memory-budget is 16 bytes, less than any model takes .* such as 16GiB/);
    expect(() => onDemandFromEnv({ HANGAR_MEMORY_BUDGET: '1kb' }, {})).toThrow(/HANGAR_MEMORY_BUDGET is 1000 bytes/);
    expect(onDemandFromEnv({}, { memoryBudget: '16MiB' }).memoryBudgetBytes).toBe(16 * 2 ** 20);
  });
});

describe('on-demand settings', () => {
  it('defaults: off, 5 minutes for on-demand models, never for the rest, the budget from physical memory', () => {
    expect(onDemandFromEnv({})).toEqual({
      enabled: false, waitMs: 300_000, onDemandKeepAliveMs: 300_000, keepAliveMs: null, idleCheckMs: 1000, memoryBudgetBytes: null, gpuMemoryFraction: 0.9,
    });
  });

  it('reads the flags and the environment, the flag winning', () => {
    const env = { HANGAR_ON_DEMAND: '1', HANGAR_MEMORY_BUDGET: '8GiB', HANGAR_KEEP_ALIVE: '10m', HANGAR_ON_DEMAND_KEEP_ALIVE: '-1' };
    expect(onDemandFromEnv(env)).toMatchObject({ enabled: true, memoryBudgetBytes: 8 * 2 ** 30, keepAliveMs: 600_000, onDemandKeepAliveMs: null });
    expect(onDemandFromEnv(env, { memoryBudget: '2GiB' }).memoryBudgetBytes).toBe(2 * 2 ** 30);
    expect(onDemandFromEnv({}, { onDemand: true }).enabled).toBe(true);
  });

  it('refuses bad values by name instead of starting with a default', () => {
    expect(() => onDemandFromEnv({ HANGAR_ON_DEMAND: 'maybe' })).toThrow(/HANGAR_ON_DEMAND must be 1 or 0/);
    expect(() => onDemandFromEnv({ HANGAR_KEEP_ALIVE: 'a while' })).toThrow(/HANGAR_KEEP_ALIVE: keep_alive must be/);
    expect(() => onDemandFromEnv({ HANGAR_GPU_MEMORY_FRACTION: '1.5' })).toThrow(/HANGAR_GPU_MEMORY_FRACTION must be a number from 0.01 to 1/);
    // Past Node's timer limit a wait fires after 1 ms: "wait very long" would mean "never wait".
    expect(() => onDemandFromEnv({ HANGAR_ON_DEMAND_WAIT_MS: '99999999999' })).toThrow(/HANGAR_ON_DEMAND_WAIT_MS must be a number from 0 to 2147483647/);
    expect(() => onDemandFromEnv({ HANGAR_IDLE_CHECK_MS: '99999999999' })).toThrow(/HANGAR_IDLE_CHECK_MS must be a number from 10 to 2147483647/);
    expect(onDemandFromEnv({ HANGAR_ON_DEMAND_WAIT_MS: '2147483647' }).waitMs).toBe(2147483647);
    expect(() => onDemandFromEnv({}, { memoryBudget: 'big' })).toThrow(/--memory-budget must be bytes/);
  });
});
