"""Handles on running models, by type, with Xinference's method names and arguments."""

import json
from urllib.parse import quote


class RESTfulModelHandle:
    """Any running model: what every handle shares."""

    def __init__(self, model_uid: str, transport):
        self._model_uid = model_uid
        self._transport = transport

    @property
    def model_uid(self) -> str:
        return self._model_uid

    def describe(self) -> dict:
        return self._transport.call("GET", f"/v1/models/{quote(self._model_uid, safe='')}", "describe the model")

    def _post(self, path: str, body: dict, action: str, stream: bool = False):
        if stream:
            return self._transport.stream(path, body, action)
        return self._transport.call("POST", path, action, json=body)


class RESTfulGenerateModelHandle(RESTfulModelHandle):
    def generate(self, prompt: str, generate_config=None):
        """POST /v1/completions; with ``generate_config={"stream": True}`` an iterator of chunks."""
        config = dict(generate_config or {})
        body = {"model": self._model_uid, "prompt": prompt, **config}
        return self._post("/v1/completions", body, "generate", stream=bool(config.get("stream")))


class RESTfulChatModelHandle(RESTfulGenerateModelHandle):
    def chat(self, messages, tools=None, generate_config=None):
        """POST /v1/chat/completions; with ``generate_config={"stream": True}`` an iterator of chunks."""
        config = dict(generate_config or {})
        body = {"model": self._model_uid, "messages": messages, **config}
        if tools:
            body["tools"] = tools
        return self._post("/v1/chat/completions", body, "chat", stream=bool(config.get("stream")))


class RESTfulEmbeddingModelHandle(RESTfulModelHandle):
    def create_embedding(self, input, **kwargs) -> dict:
        body = {"model": self._model_uid, "input": input, **kwargs}
        return self._post("/v1/embeddings", body, "create the embedding")


class RESTfulRerankModelHandle(RESTfulModelHandle):
    def rerank(self, documents, query, top_n=None, max_chunks_per_doc=None, return_documents=None, return_len=None, **kwargs) -> dict:
        body = {
            "model": self._model_uid,
            "documents": documents,
            "query": query,
            "top_n": top_n,
            "max_chunks_per_doc": max_chunks_per_doc,
            "return_documents": return_documents,
            "return_len": return_len,
            # Xinference's shape: extra engine arguments travel as one JSON string.
            "kwargs": json.dumps(kwargs),
        }
        return self._post("/v1/rerank", body, "rerank")


class RESTfulFlexibleModelHandle(RESTfulModelHandle):
    def infer(self, *args, **kwargs):
        """POST /v1/flexible/infers: the model's launcher gets ``args`` and every keyword."""
        body = {"model": self._model_uid, "args": list(args), **kwargs}
        return self._post("/v1/flexible/infers", body, "infer")
