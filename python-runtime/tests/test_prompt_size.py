"""The refusals of a prompt too long for the context before it is tokenized whole."""

import pytest

from hangar_runtime.engines.transformers_llm.request_builder import (
    max_token_bytes, refuse_long_prefix, refuse_unfitting_prompt)


def test_the_byte_bound_refuses_only_what_no_tokens_could_fit():
    # Longest token 10 bytes, margin 4: at most 40 bytes a token.
    refuse_unfitting_prompt("a" * (40 * 100 - 1), context_length=100, max_token_bytes=10)
    with pytest.raises(ValueError, match=r"The prompt is 4000 bytes, so at least 100 tokens"):
        refuse_unfitting_prompt("a" * 4000, context_length=100, max_token_bytes=10)
    # Multi-byte text counts its UTF-8 bytes.
    with pytest.raises(ValueError, match="12000 bytes"):
        refuse_unfitting_prompt("é" * 6000, context_length=100, max_token_bytes=10)
    # An unknown vocabulary never refuses.
    refuse_unfitting_prompt("a" * 10**6, context_length=100, max_token_bytes=0)


def test_a_long_prompt_is_measured_on_its_start_only():
    seen = []

    def count(head):
        seen.append(len(head))
        return len(head) // 4

    refuse_long_prefix("x" * 800, context_length=100, count_tokens=count)
    assert seen == []  # short: never counted here
    with pytest.raises(ValueError, match=r"its first 800 are already 200 tokens"):
        refuse_long_prefix("x" * 10**6, context_length=100, count_tokens=count)
    assert seen == [800]
    # A start that fits (long tokens) leaves the prompt to be tokenized whole.
    refuse_long_prefix("x" * 10**6, context_length=100, count_tokens=lambda head: 50)


def test_the_longest_token_is_read_from_the_vocabulary():
    class Tokenizer:
        def get_vocab(self):
            return {"a": 0, "ĠĠĠĠ": 1, "<|im_start|>": 2}

    assert max_token_bytes(Tokenizer()) == len("<|im_start|>")
    assert max_token_bytes(object()) == 0
