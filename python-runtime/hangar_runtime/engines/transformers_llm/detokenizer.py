"""Token ids to text, one token at a time.

Decoding each new token alone is wrong twice over: a byte-level token may hold
half of a UTF-8 character (it decodes to U+FFFD until the other half arrives),
and SentencePiece tokenizers drop a word's leading space when it starts the
decoded span. So each step decodes a short window of recent tokens and hands out
what the new token added to it, waiting while the text ends in U+FFFD (the
approach of text-generation-inference and vLLM)."""

# Prompt tokens kept in the first window, so the first generated word gets the
# spacing it would have had in the whole text.
_PROMPT_CONTEXT = 5
_REPLACEMENT = "\ufffd"


class Detokenizer:
    def __init__(self, tokenizer, prompt_ids: list[int], keep: frozenset[int] = frozenset()):
        """keep: special tokens whose text is output (a tool format's markup, reasoning
        tags that are special tokens); every other special token is not text."""
        self._tokenizer = tokenizer
        self._keep = keep
        self._ids = list(prompt_ids[-_PROMPT_CONTEXT:])
        self._prefix = 0  # window start
        self._read = len(self._ids)  # end of what has been handed out

    def add(self, token_id: int) -> str:
        self._ids.append(token_id)
        prefix_text = self._decode(self._ids[self._prefix:self._read])
        text = self._decode(self._ids[self._prefix:])
        if len(text) > len(prefix_text) and not text.endswith(_REPLACEMENT):
            self._prefix, self._read = self._read, len(self._ids)
            return text[len(prefix_text):]
        return ""

    def flush(self) -> str:
        """Whatever is still waiting (an unfinished character shows as U+FFFD)."""
        prefix_text = self._decode(self._ids[self._prefix:self._read])
        text = self._decode(self._ids[self._prefix:])
        self._prefix = self._read = len(self._ids)
        return text[len(prefix_text):]

    def _decode(self, ids: list[int]) -> str:
        if not ids:
            return ""
        # Special tokens (end-of-turn and the like) are not text; cleanup would
        # change text already handed out as more tokens arrive.
        if not self._keep or not any(i in self._keep for i in ids):
            return self._tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        # Runs of ordinary tokens decode together; a kept token as its special text.
        text, run = "", []
        for i in ids:
            if i not in self._keep:
                run.append(i)
                continue
            if run:
                text += self._tokenizer.decode(run, skip_special_tokens=True, clean_up_tokenization_spaces=False)
                run = []
            text += self._tokenizer.decode([i], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        if run:
            text += self._tokenizer.decode(run, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        return text
