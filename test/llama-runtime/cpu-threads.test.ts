import { describe, expect, it } from 'vitest';
import { cpuThreadsFor } from '../../src/llama-runtime/engine/cpu-threads.js';
import { parseEngineOptions } from '../../src/llama-runtime/engine/engine-options.js';

describe("the llama.cpp engine's CPU threads", () => {
  const cpu = (replicas = 1, nThreads: number | null = null) => ({ nThreads, replicas, gpu: false, inProcess: true });
  const server = (replicas = 1) => ({ nThreads: null, replicas, gpu: false, inProcess: false });

  it("in llama-server, takes the replica's whole share of the physical cores", () => {
    expect(cpuThreadsFor(server(), {}, 2, undefined, 1)).toBe(2);
    expect(cpuThreadsFor(server(), {}, 16, undefined, 1)).toBe(16);
    // 16 hardware threads on 8 cores with SMT: 8, as llama.cpp's own default.
    expect(cpuThreadsFor(server(), {}, 16, undefined, 2)).toBe(8);
    expect(cpuThreadsFor(server(2), {}, 16, undefined, 2)).toBe(4);
    expect(cpuThreadsFor(server(8), {}, 2, undefined, 1)).toBe(1);
    expect(cpuThreadsFor(server(), { HANGAR_RUNTIME_CPU_THREADS: '3' }, 16, undefined, 2)).toBe(3);
  });

  it("in this process, takes the replica's share of the cores less one for its event loop, at least one", () => {
    expect(cpuThreadsFor(cpu(), {}, 2)).toBe(1);
    expect(cpuThreadsFor(cpu(), {}, 16)).toBe(15);
    expect(cpuThreadsFor(cpu(4), {}, 16)).toBe(3);
    expect(cpuThreadsFor(cpu(2), {}, 2)).toBe(1);
    expect(cpuThreadsFor(cpu(8), {}, 2)).toBe(1);
  });

  it("lets the launch, then the operator decide, and leaves a GPU replica to the library", () => {
    expect(cpuThreadsFor(cpu(1, 3), { HANGAR_RUNTIME_CPU_THREADS: '2' }, 16)).toBe(3);
    expect(cpuThreadsFor(cpu(), { HANGAR_RUNTIME_CPU_THREADS: '2' }, 16)).toBe(2);
    expect(cpuThreadsFor(cpu(), { HANGAR_RUNTIME_CPU_THREADS: '0' }, 16)).toBeNull();
    expect(cpuThreadsFor(cpu(), { OMP_NUM_THREADS: '4' }, 16)).toBe(4);
    const warnings: string[] = [];
    expect(cpuThreadsFor(cpu(), { HANGAR_RUNTIME_CPU_THREADS: 'many' }, 4, (w) => warnings.push(w))).toBe(3);
    expect(warnings[0]).toContain('HANGAR_RUNTIME_CPU_THREADS="many"');
    expect(cpuThreadsFor({ nThreads: null, replicas: 1, gpu: true, inProcess: false }, {}, 16)).toBeNull();
  });

  it('reads its launch options as numbers or the CLI\'s strings, naming a bad one', () => {
    expect(parseEngineOptions({ n_ctx: '4096', n_parallel: 2, n_gpu_layers: -1, device: 'cpu' })).toEqual({ nCtx: 4096, nParallel: 2, nGpuLayers: -1, nThreads: null });
    expect(parseEngineOptions(undefined).nParallel).toBe(8);
    expect(() => parseEngineOptions({ n_parallel: 0 })).toThrow(/engine_kwargs.n_parallel must be an integer of at least 1/);
    expect(() => parseEngineOptions({ n_ctx: 'big' })).toThrow(/engine_kwargs.n_ctx/);
  });
});
