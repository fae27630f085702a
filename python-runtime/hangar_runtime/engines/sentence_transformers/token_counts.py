"""How many tokens each input is, counted the way the model reads it (special
tokens included), before it is batched: a call over the limit with
`truncate: false` must fail alone, and usage reports what was really read."""


def count_tokens(tokenizer, texts: list[str], pairs: list[str] | None = None) -> list[int]:
    """Tokens per text, or per (text, pair) when `pairs` is given; not truncated."""
    if not texts:
        return []
    # verbose=False: counting an over-long input is the point here, not a mistake
    # worth the tokenizer's "longer than the maximum" warning.
    encoded = tokenizer(texts, pairs, add_special_tokens=True, truncation=False, padding=False, verbose=False)
    return [len(ids) for ids in encoded["input_ids"]]


def check_lengths(counts: list[int], max_tokens: int, truncate: bool, label: str) -> int:
    """The tokens the model will read in all. With truncate off, an input over
    the limit raises, naming its index: `label` is "input {}", say, formatted
    with the index."""
    if not truncate:
        for index, count in enumerate(counts):
            if count > max_tokens:
                raise ValueError(f"{label.format(index)} has {count} tokens, more than the model's {max_tokens} "
                                 f"(send truncate: true to cut it instead)")
    return sum(min(count, max_tokens) for count in counts)


def parse_truncate(value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"truncate must be true or false, got {value!r}")
    return value
