"""The `sentence_transformers` engine: load (folder or hub download), describe,
and `embed` (bi-encoder, model_type embedding) or `rerank` (cross-encoder,
model_type rerank), served by the window batcher.

Imports here stay light: PyTorch and sentence-transformers (seconds to import)
are loaded after the model files are found, so a download that cannot start
fails fast."""

from ...errors import InvalidModel
from ..base import BatchScheduler, Engine, Progress
from ..hub_download import DOWNLOAD_SHARE, model_folder

DEFAULT_BATCH_WINDOW_MS = 5
DEFAULT_MAX_BATCH_SIZE = 64
# model_type -> (cross-encoder?, the ability and method it serves)
_KINDS = {"embedding": (False, "embed"), "rerank": (True, "rerank")}
# Weights for other frameworks and runtimes that sentence-transformers repositories
# often carry (ONNX and OpenVINO exports can be larger than the model): not fetched.
_NOT_DOWNLOADED = ["onnx/*", "openvino/*", "*.onnx", "*.h5", "*.msgpack", "*.ot", "tf_model*", "flax_model*",
                   "rust_model*", "coreml/*"]


class SentenceTransformersEngine(Engine):
    name = "sentence_transformers"

    def __init__(self):
        self.abilities: tuple[str, ...] = ()
        self._description: dict = {}
        self._task = None
        self._batcher = None
        self._tokenizer = None

    def load(self, spec: dict, progress: Progress) -> None:
        model_type = spec.get("model_type")
        if model_type not in _KINDS:
            raise InvalidModel(f"The sentence_transformers engine serves embedding and rerank models, "
                               f"not model_type {model_type!r}")
        cross, method = _KINDS[model_type]
        engine_kwargs = spec.get("engine_kwargs") or {}
        if not isinstance(engine_kwargs, dict):
            raise InvalidModel(f"engine_kwargs must be a map, got {type(engine_kwargs).__name__}")
        window_ms = _batch_window_ms(engine_kwargs)
        max_batch_size = _max_batch_size(engine_kwargs)
        batching = engine_kwargs.get("batching", True)
        if not isinstance(batching, bool):
            raise InvalidModel(f"engine_kwargs.batching must be true or false, got {batching!r}")
        path = model_folder(spec, progress, ignore_patterns=_NOT_DOWNLOADED)
        progress(DOWNLOAD_SHARE, "load", f"Loading {path}")

        from .embedder import Embedder
        from .loaded_encoder import load_encoder
        from .reranker import Reranker
        from .window_batcher import WindowBatcher

        loaded = load_encoder(path, spec, engine_kwargs, cross)
        self._tokenizer = loaded.tokenizer
        self._task = (Reranker if cross else Embedder)(loaded, max_batch_size)
        if batching:
            self._batcher = WindowBatcher(self._task, window_ms / 1000.0, max_batch_size)
        self.abilities = (method,)
        self._description = {"max_tokens": loaded.max_tokens}
        if loaded.dimensions is not None:
            self._description["dimensions"] = loaded.dimensions
        progress(1.0, "load", f"Loaded {path} on {loaded.device}")

    def describe(self) -> dict:
        return dict(self._description)

    def methods(self) -> dict:
        # convert_ids_to_tokens runs on its own, never through the batcher.
        return {self._task.method: getattr(self, self._task.method), "convert_ids_to_tokens": self.convert_ids_to_tokens}

    def scheduler(self) -> BatchScheduler | None:
        # None with batching off: the work loop then calls embed/rerank itself,
        # one call per forward pass.
        return self._batcher

    # The runtime hands these calls to the batcher; called directly (batching
    # off, an embedding program, a test), each is its own forward pass.

    def embed(self, *args, **kwargs) -> dict:
        return self._run_alone(args, kwargs)

    def rerank(self, *args, **kwargs) -> dict:
        return self._run_alone(args, kwargs)

    def convert_ids_to_tokens(self, ids, skip_special_tokens: bool = False) -> list:
        """Xinference's /v1/convert_ids_to_tokens: the model's tokens for token ids, one
        list of ids or a list of them (the shape comes back as it went in)."""
        if not isinstance(skip_special_tokens, bool):
            raise TypeError(f"skip_special_tokens must be true or false, got {skip_special_tokens!r}")
        nested = isinstance(ids, list) and len(ids) > 0 and all(isinstance(row, list) for row in ids)
        rows = ids if nested else [ids]
        vocab = len(self._tokenizer)
        for i, row in enumerate(rows):
            if not isinstance(row, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in row):
                raise TypeError(f"input{f'[{i}]' if nested else ''} must be a list of token ids (integers)")
            bad = [t for t in row if not 0 <= t < vocab]
            if bad:
                raise ValueError(f"input{f'[{i}]' if nested else ''}: token ids {bad[:5]} are outside this model's vocabulary (0 to {vocab - 1})")
        tokens = [self._tokenizer.convert_ids_to_tokens(row, skip_special_tokens=skip_special_tokens) for row in rows]
        return tokens if nested else tokens[0]

    def _run_alone(self, args, kwargs) -> dict:
        return self._task.run([self._task.prepare(list(args), dict(kwargs))])[0]


def _batch_window_ms(engine_kwargs: dict) -> float:
    value = engine_kwargs.get("batch_window_ms", DEFAULT_BATCH_WINDOW_MS)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10_000:
        raise InvalidModel(f"engine_kwargs.batch_window_ms must be a number of milliseconds from 0 to 10000, "
                           f"got {value!r}")
    return float(value)


def _max_batch_size(engine_kwargs: dict) -> int:
    value = engine_kwargs.get("max_batch_size", DEFAULT_MAX_BATCH_SIZE)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidModel(f"engine_kwargs.max_batch_size must be a positive integer, got {value!r}")
    return value
