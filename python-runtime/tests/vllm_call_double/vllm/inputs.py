"""Double of vllm.inputs (0.30.0): TokensPrompt is a TypedDict. Proves well-formed calls only."""

from typing import Any, NotRequired, TypedDict


class TokensPrompt(TypedDict):
    prompt_token_ids: list[int]
    token_type_ids: NotRequired[list[int]]
    multi_modal_data: NotRequired[Any]
    mm_processor_kwargs: NotRequired[dict[str, Any]]
    cache_salt: NotRequired[str]
