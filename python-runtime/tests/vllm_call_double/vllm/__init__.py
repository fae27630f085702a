"""Call-compatibility double of vllm 0.30.0 (tests/vllm_call_double/README.md):
proves well-formed calls only, nothing about GPUs or vLLM's behaviour."""

from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.inputs import TokensPrompt
from vllm.outputs import CompletionOutput, RequestOutput
from vllm.sampling_params import RequestOutputKind, SamplingParams, StructuredOutputsParams
from vllm.v1.engine.async_llm import AsyncLLM

__all__ = ["AsyncEngineArgs", "AsyncLLM", "CompletionOutput", "RequestOutput",
           "RequestOutputKind", "SamplingParams", "StructuredOutputsParams", "TokensPrompt"]
