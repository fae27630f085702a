"""Double of vllm.sampling_params (0.30.0): SamplingParams takes exactly the
release's keyword arguments (an unknown one is a TypeError, as with vLLM's
msgspec struct). Proves well-formed calls only."""

from enum import IntEnum
from dataclasses import dataclass
from typing import Any

from vllm.exceptions import VLLMValidationError


class RequestOutputKind(IntEnum):
    CUMULATIVE = 0  # every output holds everything so far
    DELTA = 1  # every output holds only what is new
    FINAL_ONLY = 2


@dataclass
class StructuredOutputsParams:
    """vLLM 0.30's fields (GuidedDecodingParams until 0.11); exactly one kind of
    constraint, as vLLM checks."""
    json: str | dict | None = None
    regex: str | None = None
    choice: list[str] | None = None
    grammar: str | None = None
    json_object: bool | None = None
    disable_any_whitespace: bool = False
    disable_additional_properties: bool = False
    whitespace_pattern: str | None = None
    structural_tag: str | None = None

    def __post_init__(self):
        kinds = sum(x is not None for x in (self.json, self.regex, self.choice, self.grammar, self.json_object, self.structural_tag))
        if kinds > 1:
            raise ValueError(f"You can only use one kind of structured outputs constraint but multiple are specified: {self.__dict__}")
        if kinds < 1:
            raise ValueError(f"You must use one kind of structured outputs constraint but none are specified: {self.__dict__}")


class SamplingParams:
    def __init__(self, *, n: int = 1, presence_penalty: float = 0.0, frequency_penalty: float = 0.0,
                 repetition_penalty: float = 1.0, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
                 min_p: float = 0.0, seed: int | None = None, stop: str | list[str] | None = None,
                 stop_token_ids: list[int] | None = None, ignore_eos: bool = False, max_tokens: int | None = 16,
                 min_tokens: int = 0, logprobs: int | None = None, prompt_logprobs: int | None = None,
                 prompt_logprob_token_ids: list[int] | None = None, prompt_logprob_start: int | None = None,
                 logprob_token_ids: list[int] | None = None, flat_logprobs: bool = False, detokenize: bool = True,
                 skip_special_tokens: bool = True, spaces_between_special_tokens: bool = True,
                 include_stop_str_in_output: bool = False,
                 output_kind: RequestOutputKind = RequestOutputKind.CUMULATIVE, stream_interval: int | None = None,
                 skip_clone: bool = False, output_text_buffer_length: int = 0,
                 structured_outputs: Any = None, logit_bias: dict[int, float] | None = None,
                 allowed_token_ids: list[int] | None = None, extra_args: dict[str, Any] | None = None,
                 bad_words: list[str] | None = None, skip_reading_prefix_cache: bool | None = None,
                 thinking_token_budget: int | None = None, repetition_detection: Any = None,
                 routed_experts_prompt_start: int = 0, trace_decode_token_ids: list[int] | None = None):
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise VLLMValidationError(f"max_tokens must be at least 1, got {max_tokens}.")
        if top_k < -1:
            raise VLLMValidationError(f"top_k must be -1 (disable), or at least 0, got {top_k}.")
        if not 0.0 < top_p <= 1.0:
            raise VLLMValidationError(f"top_p must be in (0, 1], got {top_p}.")
        if not 0.0 <= min_p <= 1.0:
            raise VLLMValidationError(f"min_p must be in [0, 1], got {min_p}.")
        if min_tokens < 0:
            raise VLLMValidationError(f"min_tokens must be greater than or equal to 0, got {min_tokens}.")
        if min_tokens > max_tokens:
            raise VLLMValidationError(f"min_tokens must be less than or equal to max_tokens={max_tokens}, got {min_tokens}.")
        if logprobs is not None and logprobs < 0:
            raise VLLMValidationError(f"logprobs must be non-negative, got {logprobs}.")
        if prompt_logprobs is not None and prompt_logprobs < 0:
            raise VLLMValidationError(f"prompt_logprobs must be non-negative, got {prompt_logprobs}.")
        self.prompt_logprobs = prompt_logprobs
        self.n, self.temperature, self.top_p, self.top_k = n, temperature, top_p, top_k
        self.max_tokens, self.seed, self.logprobs = max_tokens, seed, logprobs
        self.stop = [stop] if isinstance(stop, str) else list(stop or [])
        if any(s == "" for s in self.stop):
            raise VLLMValidationError("stop cannot contain an empty string.", parameter="stop")
        self.stop_token_ids = list(stop_token_ids or [])
        self.ignore_eos, self.min_p, self.min_tokens = ignore_eos, min_p, min_tokens
        self.repetition_penalty = repetition_penalty
        self.logit_bias = logit_bias
        self.include_stop_str_in_output = include_stop_str_in_output
        self.output_kind = output_kind
        if structured_outputs is not None and not isinstance(structured_outputs, StructuredOutputsParams):
            raise TypeError(f"structured_outputs must be StructuredOutputsParams, got {type(structured_outputs).__name__}")
        self.structured_outputs = structured_outputs
