"""Which handle ``Client.get_model`` gives for a model, as Xinference's client picks it."""

from .handles import (
    RESTfulChatModelHandle,
    RESTfulEmbeddingModelHandle,
    RESTfulFlexibleModelHandle,
    RESTfulGenerateModelHandle,
    RESTfulModelHandle,
    RESTfulRerankModelHandle,
)
from .media_handles import RESTfulAudioModelHandle, RESTfulImageModelHandle, RESTfulVideoModelHandle


def handle_for(description: dict, model_uid: str, transport) -> RESTfulModelHandle:
    """The handle class Xinference's ``get_model`` picks for a model's type and abilities."""
    model_type = description.get("model_type", "LLM")
    if model_type == "LLM":
        if "chat" in (description.get("model_ability") or []):
            return RESTfulChatModelHandle(model_uid, transport)
        return RESTfulGenerateModelHandle(model_uid, transport)
    by_type = {
        "embedding": RESTfulEmbeddingModelHandle,
        "rerank": RESTfulRerankModelHandle,
        "flexible": RESTfulFlexibleModelHandle,
        "image": RESTfulImageModelHandle,
        "audio": RESTfulAudioModelHandle,
        "video": RESTfulVideoModelHandle,
    }
    return by_type.get(model_type, RESTfulModelHandle)(model_uid, transport)
