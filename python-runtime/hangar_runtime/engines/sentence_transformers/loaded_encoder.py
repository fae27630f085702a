"""The model on its device, and the two limits calls are checked against: how
many tokens it reads (`max_tokens`) and, for a bi-encoder, how long its vectors
are and whether they come out normalised."""

import logging
from dataclasses import dataclass

import torch
import transformers
from sentence_transformers import CrossEncoder, SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize

from ...errors import InvalidModel, exception_text
from ..torch_device import pick_device

log = logging.getLogger("hangar_runtime.sentence_transformers")

# Only when neither the model nor the registration says: BERT's limit.
_FALLBACK_MAX_TOKENS = 512


@dataclass
class LoadedEncoder:
    model: SentenceTransformer | CrossEncoder
    tokenizer: object
    device: torch.device
    max_tokens: int
    dimensions: int | None  # a bi-encoder's vector length; None for a cross-encoder
    normalizes: bool  # a bi-encoder's vectors leave the model unit-length


def load_encoder(path: str, spec: dict, engine_kwargs: dict, cross: bool) -> LoadedEncoder:
    # Their progress bars would reach the control plane's log as garbled lines.
    transformers.utils.logging.disable_progress_bar()
    device = pick_device()
    cls = CrossEncoder if cross else SentenceTransformer
    try:
        # local_files_only: the folder is all there is; a hub download already happened.
        model = cls(path, device=str(device), local_files_only=True,
                    trust_remote_code=bool(engine_kwargs.get("trust_remote_code", False)))
    # What a folder that is not a (supported) model raises: missing or bad files,
    # an unknown architecture.
    except (OSError, ValueError, KeyError) as exc:
        raise InvalidModel(f"Cannot load {path} as a sentence-transformers {cls.__name__}: "
                           f"{type(exc).__name__}: {exception_text(exc)}") from exc
    model.eval()
    if cross and model.num_labels != 1:
        # rerank answers one relevance score per document; a classifier over
        # several labels has no single one to give.
        raise InvalidModel(f"{path} is a cross-encoder with {model.num_labels} output labels; "
                           f"a rerank model has one")
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        raise InvalidModel(f"{path} has no tokenizer; this engine serves text models only")
    max_tokens = _max_tokens(model, spec)
    # What sentence-transformers truncates to, so the counts calls report are the truth.
    model.max_seq_length = max_tokens
    dimensions = None if cross else model.get_embedding_dimension()
    if not cross and not isinstance(dimensions, int):
        raise InvalidModel(f"{path} does not say how long its embeddings are")
    registered = spec.get("dimensions")
    if dimensions is not None and isinstance(registered, int) and registered != dimensions:
        # The model is the truth; READY's description tells the control plane.
        log.warning("the registration says %d dimensions, the model gives %d", registered, dimensions)
    normalizes = not cross and any(isinstance(m, Normalize) for m in model)
    log.info("loaded %s on %s: max_tokens %d%s", cls.__name__, device, max_tokens,
             "" if cross else f", {dimensions} dimensions{' (normalised)' if normalizes else ''}")
    return LoadedEncoder(model=model, tokenizer=tokenizer, device=device, max_tokens=max_tokens,
                         dimensions=dimensions, normalizes=normalizes)


def _max_tokens(model, spec: dict) -> int:
    # The registration's max_tokens is what users were promised; the model's own
    # limit still caps it (positions past it are untrained, or do not exist).
    own = model.max_seq_length
    if not _positive_int(own):
        config = getattr(model, "config", None)
        own = getattr(config, "max_position_embeddings", None)
    registered = spec.get("max_tokens")
    candidates = [n for n in (own, registered) if _positive_int(n)]
    return min(candidates) if candidates else _FALLBACK_MAX_TOKENS


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
