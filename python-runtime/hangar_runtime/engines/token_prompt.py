"""A `generate` call's prompt given as token ids (OpenAI's and vLLM's completions take
them): checked against the model's vocabulary and handed to the model as they are,
with no special token added (docs/runtime-protocol.md, "Calls")."""

from ..errors import field_error


def is_token_prompt(prompt) -> bool:
    return isinstance(prompt, list)


def token_prompt(prompt: list, vocab_size: int, field: str = "prompt", context_length: int | None = None) -> list[int]:
    """The ids, or `invalid` naming the field for an empty list, a non-integer or an id
    outside the vocabulary (0 to vocab_size - 1). With context_length, a list that leaves
    no room is refused first, before its ids are looked at (a 4 MiB body holds 2M ids)."""
    if not prompt:
        raise field_error(field, f"{field}: the token list is empty")
    if context_length is not None and len(prompt) >= context_length:
        raise ValueError(f"The prompt is {len(prompt)} tokens, which leaves no room in the model's context "
                         f"of {context_length} tokens")
    for i, token in enumerate(prompt):
        if isinstance(token, bool) or not isinstance(token, int):
            raise field_error(field, f"{field}[{i}] must be a token id (an integer), got {type(token).__name__}")
        if not 0 <= token < vocab_size:
            raise field_error(field, f"{field}: token id {token} (at {i}) is outside this model's vocabulary "
                                     f"(0 to {vocab_size - 1})")
    return list(prompt)
