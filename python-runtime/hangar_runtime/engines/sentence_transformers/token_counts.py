"""How many tokens each input is, counted the way the model reads it (special
tokens included), before it is batched: a call over the limit with
`truncate: false` must fail alone, and usage reports what was really read.

An input is counted (and later encoded) only as far as the model can read it: a
text far past that is cut first, at a length that still holds more tokens than the
model reads, so its vector and its usage are the same. A 14 MB input was tokenized
whole twice (20 s, then 8 s) for the 64 tokens its model read, holding the model
for every other caller; a reranker's query was tokenized again for each document."""

from ...errors import field_error

# Tokens past the model's limit a cut text must still hold, so the cut (which may split
# a word) never reaches a token the model reads.
_MARGIN_TOKENS = 16


def longest_token_chars(tokenizer) -> int:
    """The longest vocabulary entry in characters, plus one for a space between tokens:
    a text's first n tokens lie within its first n times this many characters, unless
    whitespace (which tokens leave out) runs long; 64 where the vocabulary is not listed."""
    try:
        return max((len(str(t)) for t in tokenizer.get_vocab()), default=63) + 1
    except Exception:  # noqa: BLE001 - any tokenizer without a listable vocabulary
        return 64


def bounded(tokenizer, texts: list[str], max_tokens: int, per_token_chars: int) -> tuple[list[str], set[int]]:
    """Each text cut to what holds more tokens than the model reads (its own length if
    shorter), and the indexes of those cut. A cut is checked to hold them; a head padded
    with whitespace (which tokens leave out) that holds too few is grown fourfold until
    it holds enough or is the whole text, so padding costs a few passes, not a whole one."""
    limit = (max_tokens + _MARGIN_TOKENS) * per_token_chars
    out, cut = [], set()
    for index, text in enumerate(texts):
        size = limit
        while len(text) > size:
            head = text[:size]
            if len(tokenizer(head, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]) > max_tokens + 1:
                out.append(head)
                cut.add(index)
                break
            size *= 4
        else:
            out.append(text)
    return out, cut


def count_tokens(tokenizer, texts: list[str]) -> list[int]:
    """Tokens per text, special tokens included; not truncated."""
    if not texts:
        return []
    # verbose=False: counting an over-long input is the point here, not a mistake
    # worth the tokenizer's "longer than the maximum" warning.
    encoded = tokenizer(texts, add_special_tokens=True, truncation=False, padding=False, verbose=False)
    return [len(ids) for ids in encoded["input_ids"]]


def count_pair_tokens(tokenizer, query: str, documents: list[str]) -> list[int]:
    """Tokens per (query, document) pair as a cross-encoder reads it: the query counted
    once, each document once, and the special tokens a pair takes."""
    plain = tokenizer([query, *documents], add_special_tokens=False, truncation=False, padding=False, verbose=False)
    lengths = [len(ids) for ids in plain["input_ids"]]
    specials = tokenizer.num_special_tokens_to_add(pair=True)
    return [lengths[0] + length + specials for length in lengths[1:]]


def check_lengths(counts: list[int], max_tokens: int, truncate: bool, label: str, field: str, cut: set[int] = frozenset()) -> int:
    """The tokens the model will read in all. With truncate off, an input over
    the limit raises, naming its index: `label` is "input {}", say, formatted
    with the index. An input cut before counting holds at least its count."""
    if not truncate:
        for index, count in enumerate(counts):
            if count > max_tokens:
                many = f"at least {count}" if index in cut else str(count)
                raise field_error(field, f"{label.format(index)} has {many} tokens, more than the model's {max_tokens} "
                                         f"(send truncate: true to cut it instead)")
    return sum(min(count, max_tokens) for count in counts)


def parse_truncate(value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"truncate must be true or false, got {value!r}")
    return value
