"""Python client for a Hangar server, with Xinference's RESTful client interface.

    from hangar_client import Client
    client = Client("http://127.0.0.1:9997")
    uid = client.launch_model(model_name="my-llm", model_engine="Transformers")
    for chunk in client.get_model(uid).chat([{"role": "user", "content": "Hi"}], generate_config={"stream": True}):
        print(chunk["choices"][0]["delta"].get("content", ""), end="")
"""

from .client import Client, RESTfulClient
from .errors import HangarClientError
from .handles import (
    RESTfulChatModelHandle,
    RESTfulEmbeddingModelHandle,
    RESTfulFlexibleModelHandle,
    RESTfulGenerateModelHandle,
    RESTfulModelHandle,
    RESTfulRerankModelHandle,
)
from .media_handles import RESTfulAudioModelHandle, RESTfulImageModelHandle, RESTfulVideoModelHandle

__all__ = [
    "Client",
    "RESTfulClient",
    "HangarClientError",
    "RESTfulModelHandle",
    "RESTfulGenerateModelHandle",
    "RESTfulChatModelHandle",
    "RESTfulEmbeddingModelHandle",
    "RESTfulRerankModelHandle",
    "RESTfulFlexibleModelHandle",
    "RESTfulImageModelHandle",
    "RESTfulAudioModelHandle",
    "RESTfulVideoModelHandle",
]
