"""Call-compatibility double of vllm 0.11.0 (tests/vllm_call_double/README.md):
proves well-formed calls only, nothing about GPUs or vLLM's behaviour."""

from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.inputs import TokensPrompt
from vllm.outputs import CompletionOutput, RequestOutput
from vllm.sampling_params import RequestOutputKind, SamplingParams
from vllm.v1.engine.async_llm import AsyncLLM

AsyncLLMEngine = AsyncLLM  # vllm 0.11 exports the V1 engine under the old name too

__all__ = ["AsyncEngineArgs", "AsyncLLM", "AsyncLLMEngine", "CompletionOutput", "RequestOutput",
           "RequestOutputKind", "SamplingParams", "TokensPrompt"]
