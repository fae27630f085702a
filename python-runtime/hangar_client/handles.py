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


class RESTfulImageModelHandle(RESTfulModelHandle):
    def text_to_image(self, prompt, n: int = 1, size: str = "1024*1024", response_format: str = "url", **kwargs) -> dict:
        """POST /v1/images/generations; extra keywords travel as Xinference's ``kwargs`` JSON string."""
        body = {"model": self._model_uid, "prompt": prompt, "n": n, "size": size,
                "response_format": response_format, "kwargs": json.dumps(kwargs)}
        return self._post("/v1/images/generations", body, "create the images")

    def ocr(self, image: bytes, **kwargs):
        """POST /v1/images/ocr (multipart): the text the model reads in ``image``."""
        return self._transport.call_form("/v1/images/ocr", "ocr the images",
                                         data={"model": self._model_uid, "kwargs": json.dumps(kwargs)},
                                         files=[("image", ("image", image, "application/octet-stream"))])


class RESTfulVideoModelHandle(RESTfulModelHandle):
    def text_to_video(self, prompt: str, n: int = 1, **kwargs) -> dict:
        """POST /v1/video/generations."""
        body = {"model": self._model_uid, "prompt": prompt, "n": n, "kwargs": json.dumps(kwargs)}
        return self._post("/v1/video/generations", body, "create the video")


class RESTfulAudioModelHandle(RESTfulModelHandle):
    def transcriptions(self, audio: bytes, language=None, prompt=None, response_format="json", temperature=0,
                       timestamp_granularities=None, **kwargs):
        """POST /v1/audio/transcriptions (multipart), as Xinference's client sends it."""
        return self._audio_text("/v1/audio/transcriptions", "transcribe the audio", audio, language, prompt,
                                response_format, temperature, timestamp_granularities, kwargs)

    def translations(self, audio: bytes, language=None, prompt=None, response_format="json", temperature=0,
                     timestamp_granularities=None):
        """POST /v1/audio/translations (multipart): the speech in English."""
        return self._audio_text("/v1/audio/translations", "translate the audio", audio, language, prompt,
                                response_format, temperature, timestamp_granularities, None)

    def speech(self, input: str, voice: str = "", response_format: str = "mp3", speed: float = 1.0,
               stream: bool = False, **kwargs):
        """POST /v1/audio/speech: the audio's bytes, or with ``stream`` an iterator of chunks."""
        body = {"model": self._model_uid, "input": input, "voice": voice, "response_format": response_format,
                "speed": speed, "stream": stream, "kwargs": json.dumps(kwargs)}
        return self._transport.call_bytes("/v1/audio/speech", "speech the text", json=body, stream=stream)

    def _audio_text(self, path, action, audio, language, prompt, response_format, temperature, granularities, kwargs):
        data = {"model": self._model_uid, "language": language, "prompt": prompt, "response_format": response_format,
                "temperature": temperature, "timestamp_granularities[]": granularities}
        if kwargs is not None:
            data["kwargs"] = json.dumps(kwargs)
        return self._transport.call_form(path, action, data=data, files=[("file", ("file", audio, "application/octet-stream"))])


class RESTfulFlexibleModelHandle(RESTfulModelHandle):
    def infer(self, *args, **kwargs):
        """POST /v1/flexible/infers: the model's launcher gets ``args`` and every keyword."""
        body = {"model": self._model_uid, "args": list(args), **kwargs}
        return self._post("/v1/flexible/infers", body, "infer")


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
