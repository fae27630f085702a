"""Double of vllm.engine.arg_utils (0.30.0): AsyncEngineArgs takes the release's
field names only (a subset of its many, the ones a Hangar launch passes on, spelled
as vLLM spells them); anything else is a TypeError, as with vLLM's dataclass (swap_space, removed in
2026, included).
Proves well-formed calls only."""

_FIELDS = frozenset({
    "model", "tokenizer", "dtype", "max_model_len", "gpu_memory_utilization", "tensor_parallel_size",
    "pipeline_parallel_size", "max_num_seqs", "max_num_batched_tokens", "trust_remote_code", "quantization",
    "enforce_eager", "seed", "revision", "download_dir", "kv_cache_dtype", "enable_prefix_caching",
    "enable_chunked_prefill", "disable_log_stats", "enable_lora", "max_loras", "max_lora_rank", "served_model_name",
    "block_size", "cpu_offload_gb", "distributed_executor_backend", "limit_mm_per_prompt", "stream_interval",
    "enable_sleep_mode",
})


class AsyncEngineArgs:
    def __init__(self, **kwargs):
        unknown = sorted(set(kwargs) - _FIELDS)
        if unknown:
            raise TypeError(f"AsyncEngineArgs.__init__() got an unexpected keyword argument '{unknown[0]}'")
        if "model" not in kwargs:
            raise TypeError("AsyncEngineArgs needs model")
        self.__dict__.update(kwargs)
