"""Our generate_config as the keyword arguments of vllm.SamplingParams. Kept free
of any vllm import, so the mapping is tested on machines without vLLM."""

from ..transformers_llm.generate_config import DEFAULT_MAX_TOKENS, GenerateConfig


def prompt_room(prompt_tokens: int, context_length: int) -> int:
    """The tokens left to generate after the prompt; a prompt that leaves none is refused."""
    room = context_length - prompt_tokens
    if room <= 0:
        raise ValueError(f"The prompt has {prompt_tokens} tokens, which leaves no room in the model's context of {context_length}")
    return room


def sampling_kwargs(config: GenerateConfig, *, prompt_tokens: int, context_length: int,
                    logprobs: int | None = None) -> dict:
    room = prompt_room(prompt_tokens, context_length)
    max_tokens = min(config.max_tokens or DEFAULT_MAX_TOKENS, room)
    kwargs = {
        "max_tokens": max_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        # vLLM spells "off" as -1 (0 is refused); ours allows 0 or -1.
        "top_k": config.top_k if config.top_k > 0 else -1,
        "repetition_penalty": config.repetition_penalty,
        "stop": list(config.stop),
        "stop_token_ids": list(config.stop_token_ids),
        # vLLM leaves stop strings out of the text by default; say so, the protocol requires it.
        "include_stop_str_in_output": False,
    }
    if config.seed is not None:
        kwargs["seed"] = config.seed
    if config.ignore_eos:
        kwargs["ignore_eos"] = True
    if config.min_p:
        kwargs["min_p"] = config.min_p
    if config.min_tokens:
        kwargs["min_tokens"] = min(config.min_tokens, max_tokens)
    # OpenAI's, which SamplingParams takes under the same names.
    if config.frequency_penalty:
        kwargs["frequency_penalty"] = config.frequency_penalty
    if config.presence_penalty:
        kwargs["presence_penalty"] = config.presence_penalty
    if config.logit_bias:
        kwargs["logit_bias"] = dict(config.logit_bias)
    if logprobs is not None:
        kwargs["logprobs"] = logprobs
    return kwargs


def structured_output_fields(config: GenerateConfig) -> dict | None:
    """The StructuredOutputsParams fields for OpenAI's response_format (vLLM's structured
    outputs): `{"json_object": True}` or `{"json": <schema>}`; None for free text."""
    return dict(config.guide) if config.guide else None


def top_logprobs(raw) -> int | None:
    """`logprobs` / `top_logprobs` of a generate_config (as the control plane sends them)."""
    if not isinstance(raw, dict) or not raw.get("logprobs"):
        return None
    top = raw.get("top_logprobs") or 0
    if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= 20:
        raise ValueError(f"top_logprobs must be an integer from 0 to 20, got {top!r}")
    return top
