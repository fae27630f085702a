"""The `vllm` engine: LLMs on GPU hosts through vLLM's async engine."""
