"""A token's own bytes, for log-probabilities (OpenAI's `bytes`): a token that holds part
of a character (one byte of "é", three of an emoji's four) decodes alone to U+FFFD, and
its text's bytes were then EF BF BD whatever the token was, so a client could not put the
text back together, and different tokens looked alike (a completions `top_logprobs` map,
keyed by text, lost entries). The bytes come from the vocabulary's piece: byte-level BPE
(GPT-2, Qwen, Llama 3) maps each byte to one character; SentencePiece with byte fallback
(Llama 2, Mistral) writes a lone byte as `<0xE9>`."""

import json
import re
import weakref

_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
_kinds: dict[int, tuple] = {}


def _byte_decoder() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted: printable bytes stand for themselves, the rest
    for the characters from U+0100 up, in byte order."""
    kept = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in kept:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


_BYTE_DECODER = _byte_decoder()


def _kind(tokenizer) -> str:
    """'byte_level', 'byte_fallback' or 'other', from the fast tokenizer's decoder (read
    once per tokenizer; keyed by identity, checked against a reference, as an id is
    reused once its object is gone)."""
    key = id(tokenizer)
    known = _kinds.get(key)
    if known is not None and known[0]() is tokenizer:
        return known[1]
    kind = "other"
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        try:
            decoder = json.dumps(json.loads(backend.to_str()).get("decoder"))
        except (ValueError, AttributeError, TypeError):
            decoder = ""
        if '"ByteLevel"' in decoder:
            kind = "byte_level"
        elif '"ByteFallback"' in decoder:
            kind = "byte_fallback"
    _kinds[key] = (weakref.ref(tokenizer), kind)
    return kind


def token_text_and_bytes(tokenizer, token: int) -> tuple[str, list[int]]:
    """(text, bytes) of one token: its decoded text and that text's bytes, or, for a token
    that holds part of a character, OpenAI's `bytes:\\xNN` spelling and the raw bytes."""
    text = tokenizer.decode([token])
    if "\ufffd" not in text:
        return text, list(text.encode("utf-8"))
    raw = _raw_bytes(tokenizer, token)
    if raw is None:
        return text, list(text.encode("utf-8"))
    try:
        return raw.decode("utf-8"), list(raw)  # a real U+FFFD in the vocabulary
    except UnicodeDecodeError:
        return "bytes:" + "".join(f"\\x{b:02x}" for b in raw), list(raw)


def _raw_bytes(tokenizer, token: int) -> bytes | None:
    piece = tokenizer.convert_ids_to_tokens(token)
    if not isinstance(piece, str):
        return None
    kind = _kind(tokenizer)
    if kind == "byte_level":
        if all(c in _BYTE_DECODER for c in piece):
            return bytes(_BYTE_DECODER[c] for c in piece)
        return None
    if kind == "byte_fallback":
        lone = _BYTE_PIECE.match(piece)
        return bytes([int(lone.group(1), 16)]) if lone else piece.replace("\u2581", " ").encode("utf-8")
    return None
