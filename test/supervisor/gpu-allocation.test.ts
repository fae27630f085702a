import { describe, expect, it } from 'vitest';
import { allocateGpus } from '../../src/supervisor/gpu-allocation.js';
import type { LaunchRequest } from '../../src/supervisor/launch-request.js';

const base: LaunchRequest = { model_name: 'm', model_type: 'flexible', replica: 1, n_gpu: 'auto', envs: {}, engine_kwargs: {} };

describe('allocateGpus', () => {
  it('uses the CPU for auto on a machine without GPUs, and for null', () => {
    expect(allocateGpus({ ...base, replica: 2 }, 0)).toEqual([[], []]);
    expect(allocateGpus({ ...base, n_gpu: null }, 4)).toEqual([[]]);
  });

  it('spreads auto replicas over the GPUs', () => {
    expect(allocateGpus({ ...base, replica: 3 }, 2)).toEqual([[0], [1], [0]]);
  });

  it('gives each replica n_gpu GPUs', () => {
    expect(allocateGpus({ ...base, replica: 2, n_gpu: 2 }, 4)).toEqual([[0, 1], [2, 3]]);
  });

  it('splits gpu_idx evenly over replicas', () => {
    expect(allocateGpus({ ...base, replica: 2, gpu_idx: [3, 1] }, 4)).toEqual([[3], [1]]);
  });

  it('refuses impossible requests with the field named', () => {
    expect(() => allocateGpus({ ...base, n_gpu: 1 }, 0)).toThrow(/n_gpu/);
    expect(() => allocateGpus({ ...base, n_gpu: 0 }, 2)).toThrow(/n_gpu/);
    expect(() => allocateGpus({ ...base, replica: 2, gpu_idx: [0] }, 2)).toThrow(/multiple of replica/);
    expect(() => allocateGpus({ ...base, gpu_idx: [5] }, 2)).toThrow(/\[5\]/);
  });
});
