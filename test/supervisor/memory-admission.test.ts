import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import type { MemoryEstimate } from '../../src/registry/memory-estimate.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';
import { MemoryAdmission } from '../../src/supervisor/memory-admission.js';
import { chargeOf, overBudget, type MemoryBudgets } from '../../src/supervisor/memory-budget.js';
import { ModelInstance } from '../../src/supervisor/model-instance.js';
import { Replica } from '../../src/supervisor/replica.js';
import { expectHangarError, useTempRegistry } from '../registry/fixtures.js';

const registry = useTempRegistry();
const GIB = 2 ** 30;
const estimate = (gib: number): MemoryEstimate => ({ bytes: gib * GIB, weights: gib * GIB - 100, kv_cache: 0, overhead: 100, basis: 'files' });

describe('what a launch is charged', () => {
  const budgets: MemoryBudgets = { hostBytes: 10 * GIB, gpuBytes: { 0: 80 * GIB, 1: 80 * GIB } };

  it('charges CPU replicas to host memory and GPU replicas to their GPUs, vLLM its share of each', () => {
    expect(chargeOf(estimate(2), [[], []], 'transformers', {}, budgets)).toEqual({ host: 4 * GIB, gpus: {} });
    const onGpus = chargeOf(estimate(2), [[0, 1]], 'transformers', {}, budgets);
    expect(onGpus.host).toBe(100);
    expect(onGpus.gpus[0]).toBe(onGpus.gpus[1]);
    expect(onGpus.gpus[0]).toBeGreaterThan(GIB - 100);
    expect(chargeOf(estimate(2), [[0]], 'vllm', {}, budgets).gpus[0]).toBe(Math.round(0.9 * 80 * GIB));
    expect(chargeOf(estimate(2), [[0]], 'vllm', { gpu_memory_utilization: 0.5 }, budgets).gpus[0]).toBe(40 * GIB);
  });

  it('finds the device a charge does not fit on', () => {
    const holders = [{ uid: 'big', held: { host: 9 * GIB, gpus: { 1: 79 * GIB } } }];
    expect(overBudget(budgets, { host: GIB, gpus: {} }, holders)).toBeNull();
    expect(overBudget(budgets, { host: 2 * GIB, gpus: {} }, holders)).toMatchObject({ device: 'cpu', need: 2 * GIB, free_bytes: GIB, models: [{ model_uid: 'big', bytes: 9 * GIB }] });
    expect(overBudget(budgets, { host: 0, gpus: { 1: 2 * GIB } }, holders)).toMatchObject({ device: 'gpu:1', free_bytes: GIB });
  });
});

describe('admission into the budget', () => {
  const request: LaunchRequest = { model_name: 'simulator', model_type: 'LLM', model_engine: 'simulator', replica: 1, n_gpu: null, envs: {}, engine_kwargs: {} };
  const make = (uid: string, opts: { onDemand?: boolean; gib?: number; usedAt?: number; busy?: boolean; state?: 'READY' | 'CREATING' } = {}): ModelInstance => {
    const instance = new ModelInstance(uid, request, 'key', registry().resolve(request), [new Replica(0, `${uid}-0`, [])]);
    if ((opts.state ?? 'READY') === 'READY') instance.transition('READY');
    instance.onDemand = opts.onDemand ?? false;
    instance.charge = opts.gib === undefined ? null : { host: opts.gib * GIB, gpus: {} };
    instance.lastUsedAt = opts.usedAt ?? 0;
    if (opts.busy) instance.leases = 1;
    return instance;
  };
  const setup = (held: ModelInstance[], hostGib = 10) => {
    const evicted: string[] = [];
    const admission = new MemoryAdmission({
      budgets: () => ({ hostBytes: hostGib * GIB, gpuBytes: {} }),
      holders: () => held,
      evict: async (victim) => {
        evicted.push(victim.uid);
        held.splice(held.indexOf(victim), 1);
      },
      logger: createLogger('silent'),
    });
    return { admission, evicted };
  };
  const signal = new AbortController().signal;

  it('evicts idle on-demand models, least recently used first, only as many as it takes', async () => {
    const held = [make('old', { onDemand: true, gib: 3, usedAt: 1 }), make('older', { onDemand: true, gib: 3, usedAt: 0 }), make('newest', { onDemand: true, gib: 3, usedAt: 2 })];
    const { admission, evicted } = setup(held);
    const incoming = make('new', { state: 'CREATING' });
    await admission.admit(incoming, estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: null, signal });
    expect(evicted).toEqual(['older']);
    expect(incoming.charge).toEqual({ host: 4 * GIB, gpus: {} });
  });

  it('never evicts models launched by hand or busy ones; refuses without evicting anything when that would not be enough', async () => {
    const held = [make('manual', { gib: 6 }), make('busy', { onDemand: true, gib: 2, busy: true }), make('idle', { onDemand: true, gib: 1 })];
    const { admission, evicted } = setup(held);
    const err = await expectHangarError(
      () => admission.admit(make('new', { state: 'CREATING' }), estimate(3), { host: 3 * GIB, gpus: {} }, { force: false, waitUntil: null, signal }),
      'insufficient_memory',
      400,
    );
    expect(err.message).toMatch(/Model new requires more memory than is available: it needs about 3\.00 GiB of host memory \(weights 3\.00 GiB, KV cache 0 MiB, runtime 0 MiB\) and 1\.00 GiB of the 10\.00 GiB budget is free; held by manual \(6\.00 GiB\), busy \(2\.00 GiB\), idle \(1\.00 GiB\)/);
    expect(evicted).toEqual([]);
  });

  it('says when a model is larger than the whole budget, and its parts per replica', async () => {
    const { admission } = setup([make('idle', { onDemand: true, gib: 1 })], 4);
    const two = new ModelInstance('pair', { ...request, replica: 2 }, 'key', registry().resolve(request), [new Replica(0, 'pair-0', []), new Replica(1, 'pair-1', [])]);
    const err = await expectHangarError(() => admission.admit(two, estimate(3), { host: 6 * GIB, gpus: {} }, { force: false, waitUntil: null, signal }), 'insufficient_memory', 400);
    expect(err.message).toContain('it needs about 6.00 GiB of host memory (2 replicas, each weights 3.00 GiB, KV cache 0 MiB, runtime 0 MiB)');
    // Unloading the others would not make room: that is not offered.
    expect(err.message).toContain('It is larger than the whole budget: raise --memory-budget (HANGAR_MEMORY_BUDGET), launch fewer replicas or launch with force: true');
    expect(err.message).not.toContain('Terminate a model');
  });

  it('waits for a busy on-demand model when the load may wait, then evicts it', async () => {
    const busy = make('busy', { onDemand: true, gib: 8, busy: true });
    const { admission, evicted } = setup([busy]);
    setTimeout(() => {
      busy.leases = 0;
    }, 300);
    await admission.admit(make('new', { state: 'CREATING' }), estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: Date.now() + 10_000, signal });
    expect(evicted).toEqual(['busy']);
  });

  it('answers 503 model_loading with Retry-After when the wait runs out while busy models still serve', async () => {
    const busy = make('busy', { onDemand: true, gib: 8, busy: true });
    const { admission, evicted } = setup([busy]);
    const err = await admission.admit(make('new', { state: 'CREATING' }), estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: Date.now() + 300, signal }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'model_loading', status: 503, headers: { 'retry-after': '5' } });
    expect((err as Error).message).toContain('busy still serving requests');
    expect(evicted).toEqual([]);
  });

  it('does not wait for busy models that could not make room anyway', async () => {
    const busy = make('busy', { onDemand: true, gib: 1, busy: true });
    const { admission, evicted } = setup([make('manual', { gib: 8 }), busy]);
    const started = Date.now();
    await expectHangarError(
      () => admission.admit(make('new', { state: 'CREATING' }), estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: Date.now() + 10_000, signal }),
      'insufficient_memory',
      400,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(evicted).toEqual([]);
  });

  it('lets a launch cancelled while it waits go at once', async () => {
    const busy = make('busy', { onDemand: true, gib: 8, busy: true });
    const { admission } = setup([busy]);
    const cancel = new AbortController();
    const waiting = admission.admit(make('new', { state: 'CREATING' }), estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: Date.now() + 60_000, signal: cancel.signal });
    setTimeout(() => cancel.abort(), 100);
    await expect(waiting).rejects.toThrow();
    // The queue moves on: the next launch is admitted once room is made.
    busy.leases = 0;
    const next = make('next', { state: 'CREATING' });
    await admission.admit(next, estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: Date.now() + 10_000, signal });
    expect(next.charge?.host).toBe(4 * GIB);
  });

  it('decides launches by hand and forced ones at once while a load on demand waits for busy models', async () => {
    const busy = make('busy', { onDemand: true, gib: 8, busy: true });
    const held = [busy];
    const { admission } = setup(held);
    const waiter = make('waiter', { state: 'CREATING' });
    const waiting = admission.admit(waiter, estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: Date.now() + 60_000, signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Before, both stood in line behind the waiting load, up to its whole wait.
    const byHand = make('by-hand', { state: 'CREATING' });
    await expectHangarError(() => admission.admit(byHand, estimate(4), { host: 4 * GIB, gpus: {} }, { force: false, waitUntil: null, signal }), 'insufficient_memory', 400);
    const forced = make('forced', { state: 'CREATING' });
    await admission.admit(forced, estimate(4), { host: 4 * GIB, gpus: {} }, { force: true, waitUntil: null, signal });
    expect(forced.charge?.host).toBe(4 * GIB);
    held.push(forced);
    expect(waiter.charge).toBeNull();
    // The waiter still gets its room once the busy model is idle and evicted (the forced one stays).
    held.splice(held.indexOf(forced), 1);
    busy.leases = 0;
    await waiting;
    expect(waiter.charge?.host).toBe(4 * GIB);
  });

  it('launches anyway with force', async () => {
    const { admission, evicted } = setup([make('manual', { gib: 9 })]);
    const incoming = make('new', { state: 'CREATING' });
    await admission.admit(incoming, estimate(4), { host: 4 * GIB, gpus: {} }, { force: true, waitUntil: null, signal });
    expect(incoming.charge?.host).toBe(4 * GIB);
    expect(evicted).toEqual([]);
  });

  it('admits one launch at a time, so two never count the same free memory', async () => {
    const held: ModelInstance[] = [];
    const { admission } = setup(held, 5);
    const a = make('a', { state: 'CREATING' });
    const b = make('b', { state: 'CREATING' });
    held.push(a, b);
    const outcomes = await Promise.allSettled([
      admission.admit(a, estimate(3), { host: 3 * GIB, gpus: {} }, { force: false, waitUntil: null, signal }),
      admission.admit(b, estimate(3), { host: 3 * GIB, gpus: {} }, { force: false, waitUntil: null, signal }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
  });

  it('puts a model to sleep only where a GPU is short and the host can hold its weights; otherwise unloads it', async () => {
    // A sleeper that records the admission's choice; the sleep itself is
    // test/integration/vllm-sleep.test.ts's, through a real runtime.
    const onGpu = (uid: string, gpuGib: number): ModelInstance => {
      const instance = make(uid, { onDemand: true, gib: 1 });
      instance.charge = { host: GIB, gpus: { 0: gpuGib * GIB } };
      return instance;
    };
    const run = async (hostGib: number, incoming: { host: number; gpus: Record<number, number> }) => {
      const victim = onGpu('victim', 9);
      const held = [victim];
      const slept: string[] = [];
      const evicted: string[] = [];
      const admission = new MemoryAdmission({
        budgets: () => ({ hostBytes: hostGib * GIB, gpuBytes: { 0: 10 * GIB } }),
        holders: () => held,
        evict: async (v) => {
          evicted.push(v.uid);
          held.splice(held.indexOf(v), 1);
        },
        sleeper: {
          canSleep: (i) => i.charge!.gpus[0]! > GIB,
          asleepCharge: (i) => ({ host: i.charge!.host + 4 * GIB, gpus: { 0: GIB / 2 } }),
          sleep: async (i) => {
            slept.push(i.uid);
            i.charge = { host: i.charge!.host + 4 * GIB, gpus: { 0: GIB / 2 } };
            return true;
          },
        },
        logger: createLogger('silent'),
      });
      await admission.admit(make('new', { state: 'CREATING' }), estimate(1), incoming, { force: false, waitUntil: null, signal });
      return { slept, evicted };
    };
    // GPU short, host roomy: asleep, not unloaded.
    expect(await run(10, { host: GIB, gpus: { 0: 9 * GIB } })).toEqual({ slept: ['victim'], evicted: [] });
    // GPU short, but the host cannot hold 4 GiB of weights besides the launch: unloaded.
    expect(await run(5, { host: GIB, gpus: { 0: 9 * GIB } })).toEqual({ slept: [], evicted: ['victim'] });
    // Host short: sleeping would make it worse, so it is unloaded.
    expect(await run(2, { host: 2 * GIB, gpus: {} })).toEqual({ slept: [], evicted: ['victim'] });
  });
});
