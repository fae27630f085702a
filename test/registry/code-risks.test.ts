import { describe, expect, it } from 'vitest';
import { envNeedsCodePower } from '../../src/registry/code-risks.js';

describe('launch envs that need models:code', () => {
  it('lets tuning and hub tokens through, and holds back what loads code, picks a source, or names a file to read or write', () => {
    const tuning = ['HF_TOKEN', 'HF_HUB_OFFLINE', 'HUGGING_FACE_HUB_TOKEN', 'CUDA_VISIBLE_DEVICES', 'CUDA_MODULE_LOADING', 'NCCL_DEBUG', 'NCCL_SOCKET_IFNAME', 'NCCL_P2P_DISABLE',
      'VLLM_ATTENTION_BACKEND', 'VLLM_USE_V1', 'VLLM_WORKER_MULTIPROC_METHOD', 'OMP_NUM_THREADS', 'TOKENIZERS_PARALLELISM', 'PYTORCH_CUDA_ALLOC_CONF', 'TRANSFORMERS_OFFLINE'];
    for (const name of tuning) expect(envNeedsCodePower(name), name).toBe(false);
    const risky = [
      'LD_PRELOAD', 'PYTHONPATH', 'PATH', 'HOME', 'hf_token',
      // A source of weights, or a place files are written.
      'HF_ENDPOINT', 'HF_HOME', 'HF_HUB_CACHE', 'MODELSCOPE_DOMAIN', 'VLLM_CACHE_ROOT', 'VLLM_TORCH_PROFILER_DIR', 'VLLM_RPC_BASE_PATH', 'CUDA_CACHE_PATH', 'NCCL_DEBUG_FILE', 'NCCL_TOPO_DUMP_FILE',
      // A shared library by path, a configuration that names functions, pickles.
      'NCCL_NET_PLUGIN', 'NCCL_TUNER_PLUGIN', 'NCCL_PROFILER_PLUGIN', 'CUDA_INJECTION64_PATH', 'VLLM_LOGGING_CONFIG_PATH', 'VLLM_CONFIG_ROOT', 'VLLM_ALLOW_INSECURE_SERIALIZATION',
    ];
    for (const name of risky) expect(envNeedsCodePower(name), name).toBe(true);
  });
});
