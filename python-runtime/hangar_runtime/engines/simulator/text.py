"""The simulator's deterministic text: token i of every answer is WORDS[i % 16]
followed by a space, so a test can predict an answer byte for byte from its
length alone. Prompt tokens are counted as whitespace-separated words."""

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
         "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa")
TOKENS = tuple(f"{w} " for w in WORDS)


def token_text(index: int) -> str:
    return TOKENS[index % len(TOKENS)]


def answer_text(n_tokens: int) -> str:
    """The text of an answer of n tokens that no stop string cut."""
    return "".join(token_text(i) for i in range(n_tokens))


def token_logprob(index: int) -> float:
    """A fixed, plausible log-probability for token i (never 0, never below -2)."""
    return -round(0.05 + (index % 7) * 0.25, 2)


def logprob_entry(index: int, top: int) -> dict:
    """One token's logprobs as the protocol carries them (OpenAI's chat shape)."""
    text = token_text(index)
    entry = {"token": text, "logprob": token_logprob(index), "bytes": list(text.encode()), "top_logprobs": []}
    for k in range(top):
        alt = text if k == 0 else token_text(index + k)
        entry["top_logprobs"].append({"token": alt, "logprob": token_logprob(index) - k * 0.5,
                                      "bytes": list(alt.encode())})
    return entry


# Counted a slice at a time: one `split()` of a 50 MB prompt held the GIL for over a
# second, and sixteen of them kept the runtime from answering the control plane's
# PINGs long enough to be declared dead. Between slices other threads get their turn.
_COUNT_SLICE = 1 << 20


def count_prompt_tokens(text: str) -> int:
    if len(text) <= _COUNT_SLICE:
        return len(text.split())
    words = 0
    joined = False  # the previous slice ended inside a word
    for start in range(0, len(text), _COUNT_SLICE):
        piece = text[start:start + _COUNT_SLICE]
        words += len(piece.split())
        # A word cut by the slice's edge was counted in both slices.
        if joined and not piece[0].isspace():
            words -= 1
        joined = not piece[-1].isspace()
    return words


def chat_prompt_tokens(messages) -> int:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    total = 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TypeError(f"messages[{i}] must be a map")
        content = message.get("content")
        if isinstance(content, str):
            total += count_prompt_tokens(content)
        elif isinstance(content, list):  # OpenAI's content parts: only text parts count
            total += sum(count_prompt_tokens(p.get("text", "")) for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return total
