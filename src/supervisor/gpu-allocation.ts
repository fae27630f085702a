import { HangarError } from '../errors/hangar-error.js';
import type { LaunchRequest } from './launch-request.js';

/**
 * Which GPUs each replica gets, from `n_gpu` and `gpu_idx` (contract §3.1, Xinference's
 * rules and messages). Returns one list per replica; an empty list means CPU.
 * Sharing a GPU between models is allowed, as in Xinference's default; replicas of one
 * launch are spread round robin.
 */
export function allocateGpus(request: LaunchRequest, gpuCount: number): number[][] {
  const { replica, n_gpu: nGpu, gpu_idx: gpuIdx } = request;
  if (gpuIdx !== undefined) {
    if (gpuIdx.length === 0 || gpuIdx.length % replica !== 0) {
      throw new HangarError('invalid_gpu_request', ['Invalid input. Allocated gpu must be a multiple of replica.'], { param: 'gpu_idx' });
    }
    const unseen = gpuIdx.filter((i) => i < 0 || i >= gpuCount);
    if (unseen.length > 0) {
      throw new HangarError(
        'invalid_gpu_request',
        [`This machine cannot use the GPUs with these indexes: [${unseen.join(', ')}]; it has ${gpuCount} GPU(s).`],
        { param: 'gpu_idx' },
      );
    }
    const per = gpuIdx.length / replica;
    return Array.from({ length: replica }, (_, r) => gpuIdx.slice(r * per, (r + 1) * per));
  }
  if (nGpu === null) return Array.from({ length: replica }, () => []);
  if (nGpu === 'auto') {
    if (gpuCount === 0) return Array.from({ length: replica }, () => []);
    return Array.from({ length: replica }, (_, r) => [r % gpuCount]);
  }
  if (!Number.isInteger(nGpu) || nGpu <= 0 || nGpu > gpuCount) {
    throw new HangarError(
      'invalid_gpu_request',
      [`The parameter \`n_gpu\` must be greater than 0 and not greater than the number of GPUs: ${gpuCount} on the machine.`],
      { param: 'n_gpu' },
    );
  }
  return Array.from({ length: replica }, (_, r) => Array.from({ length: nGpu }, (_, g) => (r * nGpu + g) % gpuCount));
}
