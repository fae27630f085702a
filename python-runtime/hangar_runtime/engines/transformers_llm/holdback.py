"""Text arrives a token at a time, so a marker (a stop string, `<tool_call>`,
`</think>`) may be split across pieces. Whoever scans for one holds back the end
of the text that could be the marker's beginning, and no more."""


def partial_marker_length(text: str, markers: list[str]) -> int:
    """Length of the longest end of `text` that is a proper start of a marker.
    Holding exactly that much suffices: a marker beginning earlier would already
    be whole in `text`, and found by the caller's search."""
    longest = 0
    for marker in markers:
        for n in range(min(len(marker) - 1, len(text)), longest, -1):
            if text.endswith(marker[:n]):
                longest = n
                break
    return longest


def split_held(text: str, markers: list[str]) -> tuple[str, str]:
    """(safe to hand out, to hold back)."""
    keep = partial_marker_length(text, markers)
    return (text[:len(text) - keep], text[len(text) - keep:]) if keep else (text, "")
