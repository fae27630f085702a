import type { LoadSpec } from '../runtime/runtime.js';
import type { ModelInstance } from './model-instance.js';
import type { Replica } from './replica.js';

/** The LOAD message for one replica (docs/runtime-protocol.md): the resolved model plus the launch's own choices. */
export function buildLoadSpec(instance: ModelInstance, replica: Replica, cacheDir: string): LoadSpec {
  const { resolved, request } = instance;
  const load = resolved.load;
  return {
    ...load,
    model_type: resolved.modelType,
    model_name: resolved.modelName,
    model_uid: instance.uid,
    replica_uid: replica.uid,
    engine: resolved.runtimeEngine,
    // `model_path` (launch from a local folder) wins over the registered location.
    model_uri: request.model_path ?? load.model_uri,
    launcher_args: load.launcher_args ?? {},
    model_ability: resolved.abilities,
    model_family: typeof resolved.description.model_family === 'string' ? resolved.description.model_family : resolved.modelName,
    engine_kwargs: request.engine_kwargs,
    // LoRA adapters loaded at launch (Xinference's shape); absent when none.
    ...(request.peft_model_config ? { peft_model_config: request.peft_model_config } : {}),
    cache_dir: cacheDir,
    // vLLM sleep mode for a model loaded on demand on a GPU: it may be put to sleep
    // rather than unloaded when another needs the GPU (docs/on-demand.md, "vLLM sleep mode").
    ...(instance.onDemand && resolved.runtimeEngine === 'vllm' && replica.gpuIndexes.length > 0 ? { sleep_mode: true } : {}),
    // A runtime without GPUs shares the host's cores among the model's replicas (docs/runtime-protocol.md, "CPU threads").
    replicas: Math.max(1, instance.replicas.length),
  };
}
