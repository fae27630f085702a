"""A token's own bytes for log-probabilities, on both vocabularies that split characters:
SentencePiece with byte fallback (built here, as Llama 2 and Mistral ship it) and
byte-level BPE (the tiny LLM's, as Qwen and Llama 3 ship it)."""

import pytest

pytest.importorskip("transformers")

from hangar_runtime.engines.transformers_llm.token_bytes import token_text_and_bytes  # noqa: E402


def _byte_fallback_tokenizer():
    from tokenizers import Tokenizer, decoders, models, normalizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "\u2581": 1, "h": 2, "i": 3}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")


def test_byte_fallback_pieces_give_their_byte():
    tokenizer = _byte_fallback_tokenizer()
    ids = tokenizer("hi é")["input_ids"]
    pieces = [token_text_and_bytes(tokenizer, i) for i in ids]
    assert pieces[-2:] == [("bytes:\\xc3", [0xC3]), ("bytes:\\xa9", [0xA9])]
    assert ("h", [104]) in pieces


def test_byte_level_pieces_give_their_bytes(tiny_llm):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_llm["path"])
    text = "é😀日本 hello"
    pieces = [token_text_and_bytes(tokenizer, i) for i in tokenizer(text)["input_ids"]]
    assert b"".join(bytes(b) for _, b in pieces).decode("utf-8") == text
    assert all(t == bytes(b).decode("utf-8") for t, b in pieces if not t.startswith("bytes:"))
    assert any(t.startswith("bytes:") for t, _ in pieces)
