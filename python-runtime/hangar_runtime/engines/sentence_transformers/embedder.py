"""`embed`: one call's inputs checked and counted (prepare), then many calls'
inputs encoded in one `model.encode` and cut back into per-call results (run)."""

from dataclasses import dataclass

import numpy as np

from ...errors import field_error
from .call_args import bind
from .loaded_encoder import LoadedEncoder
from .token_counts import bounded, check_lengths, count_tokens, longest_token_chars, parse_truncate


@dataclass
class EmbedRequest:
    texts: list[str]
    dimensions: int | None
    prompt_tokens: int

    @property
    def size(self) -> int:
        return len(self.texts)


class Embedder:
    method = "embed"

    def __init__(self, loaded: LoadedEncoder, max_batch_size: int):
        self._loaded = loaded
        self._tokenizer = loaded.tokenizer
        self._vocab_size = len(loaded.tokenizer)
        self._per_token_chars = longest_token_chars(loaded.tokenizer)
        self._max_batch_size = max_batch_size
        # A prompt the model prepends to every input is read, so it is counted.
        model = loaded.model
        self._prompt = (getattr(model, "prompts", None) or {}).get(getattr(model, "default_prompt_name", None)) or ""

    def prepare(self, args: list, kwargs: dict) -> EmbedRequest:
        """Raises ValueError or TypeError (ERROR invalid) for input the model cannot take."""
        bound = bind(self.method, self._prepare, args, kwargs)
        return self._prepare(*bound.args, **bound.kwargs)

    def _prepare(self, inputs, dimensions=None, truncate=True) -> EmbedRequest:
        if not isinstance(inputs, list):
            raise TypeError(f"inputs must be a list of strings or of token-id lists, got {type(inputs).__name__}")
        if not inputs:
            raise ValueError("inputs must not be empty")
        truncate = parse_truncate(truncate)
        texts, cut = bounded(self._tokenizer, [self._text(index, item) for index, item in enumerate(inputs)],
                             self._loaded.max_tokens, self._per_token_chars)
        counts = count_tokens(self._tokenizer, [self._prompt + t for t in texts])
        prompt_tokens = check_lengths(counts, self._loaded.max_tokens, truncate, "input {}", "input", cut)
        return EmbedRequest(texts=texts, dimensions=self._dimensions(dimensions), prompt_tokens=prompt_tokens)

    def run(self, requests: list[EmbedRequest]) -> list[dict]:
        """One forward pass over every request's inputs (chunked only when one
        request alone has more than max_batch_size of them)."""
        texts = [t for r in requests for t in r.texts]
        vectors = self._loaded.model.encode(texts, batch_size=self._max_batch_size, show_progress_bar=False,
                                            convert_to_numpy=True)
        results, start = [], 0
        for request in requests:
            mine = vectors[start:start + request.size]
            start += request.size
            results.append({"embeddings": self._cut(mine, request.dimensions), "prompt_tokens": request.prompt_tokens})
        return results

    def _text(self, index: int, item) -> str:
        if isinstance(item, str):
            return item
        if isinstance(item, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in item):
            bad = next((t for t in item if not 0 <= t < self._vocab_size), None)
            if bad is not None:
                # Token ids from another tokenizer, most often: LangChain's OpenAIEmbeddings
                # sends tiktoken's ids unless check_embedding_ctx_length=False.
                raise field_error("input", f"input {index} has token id {bad}, outside the model's vocabulary "
                                           f"(0 to {self._vocab_size - 1}): token ids must come from this model's "
                                           "tokenizer (LangChain's OpenAIEmbeddings sends tiktoken's unless "
                                           "check_embedding_ctx_length=False)")
            # Decoded and encoded again: the model's own pipeline adds its special
            # tokens (and prompt), so ids the caller took from the same tokenizer
            # with special tokens would otherwise be doubled.
            return self._tokenizer.decode(item, skip_special_tokens=True)
        raise TypeError(f"input {index} must be a string or a list of token ids, got {_describe(item)}")

    def _dimensions(self, value) -> int | None:
        if value is None:
            return None
        full = self._loaded.dimensions
        if isinstance(value, bool) or not isinstance(value, int):
            raise field_error("dimensions", f"dimensions must be an integer, got {value!r}", TypeError)
        if not 1 <= value <= full:
            raise field_error("dimensions", f"dimensions must be between 1 and the model's {full}, got {value}")
        return value

    def _cut(self, vectors: np.ndarray, dimensions: int | None) -> np.ndarray:
        if dimensions is None or dimensions == vectors.shape[1]:
            return vectors
        # Matryoshka-style: the first N, made unit-length again if the model's own
        # vectors are (cosine and dot product then still agree).
        cut = vectors[:, :dimensions]
        if self._loaded.normalizes:
            norms = np.linalg.norm(cut, axis=1, keepdims=True)
            cut = cut / np.maximum(norms, np.finfo(cut.dtype).tiny)
        return cut


def _describe(item) -> str:
    if isinstance(item, list):
        return "a list that is not all integers"
    return type(item).__name__
