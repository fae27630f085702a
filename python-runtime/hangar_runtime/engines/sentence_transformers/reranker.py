"""`rerank`: one call's query and documents checked and counted (prepare), then
many calls' (query, document) pairs scored in one `CrossEncoder.predict` and cut
back into per-call results (run)."""

from dataclasses import dataclass

from .call_args import bind
from .loaded_encoder import LoadedEncoder
from .token_counts import bounded, check_lengths, count_pair_tokens, longest_token_chars, parse_truncate


@dataclass
class RerankRequest:
    query: str
    documents: list[str]
    input_tokens: int

    @property
    def size(self) -> int:
        return len(self.documents)


class Reranker:
    method = "rerank"

    def __init__(self, loaded: LoadedEncoder, max_batch_size: int):
        self._loaded = loaded
        self._max_batch_size = max_batch_size
        self._per_token_chars = longest_token_chars(loaded.tokenizer)

    def prepare(self, args: list, kwargs: dict) -> RerankRequest:
        """Raises ValueError or TypeError (ERROR invalid) for input the model cannot take."""
        bound = bind(self.method, self._prepare, args, kwargs)
        return self._prepare(*bound.args, **bound.kwargs)

    def _prepare(self, query, documents, truncate=True) -> RerankRequest:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        if not isinstance(documents, list) or not all(isinstance(d, str) for d in documents):
            raise TypeError("documents must be a list of strings")
        if not documents:
            raise ValueError("documents must not be empty")
        truncate = parse_truncate(truncate)
        tokenizer, max_tokens = self._loaded.tokenizer, self._loaded.max_tokens
        # Each side cut to more than the model reads of a pair: a cross-encoder cuts the
        # longer side first, so both cut past the limit are read as the whole texts are.
        (query,), query_cut = bounded(tokenizer, [query], max_tokens, self._per_token_chars)
        documents, cut = bounded(tokenizer, documents, max_tokens, self._per_token_chars)
        # A pair is read as one sequence, so the limit applies to query and document together.
        counts = count_pair_tokens(tokenizer, query, documents)
        input_tokens = check_lengths(counts, max_tokens, truncate, "document {} with the query", "documents",
                                     set(range(len(documents))) if query_cut else cut)
        return RerankRequest(query=query, documents=documents, input_tokens=input_tokens)

    def run(self, requests: list[RerankRequest]) -> list[dict]:
        pairs = [(r.query, d) for r in requests for d in r.documents]
        scores = self._loaded.model.predict(pairs, batch_size=self._max_batch_size, show_progress_bar=False,
                                            convert_to_numpy=True)
        results, start = [], 0
        for request in requests:
            mine = scores[start:start + request.size]
            start += request.size
            results.append({"scores": [float(s) for s in mine], "input_tokens": request.input_tokens})
        return results
