"""Handles on image, video and audio models, with Xinference's method names and arguments.

Uploads go as Xinference's client sends them: multipart, the file fields it names, and
extra keywords as one ``kwargs`` JSON string.
"""

import json

from .handles import RESTfulModelHandle


def _file(field: str, name: str, data):
    """One multipart file part; a path (str or PathLike) is read, as Xinference's
    image_edit reads one, bytes go as they are."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        with open(data, "rb") as f:
            data = f.read()
    return (field, (name, bytes(data), "application/octet-stream"))


def _images(field: str, images, name: str = "image"):
    """``images`` is one image or a non-empty list of them; a list is sent as repeated parts."""
    if isinstance(images, (list, tuple)):
        if not images:
            raise ValueError("Image list cannot be empty")
        return [_file(field, f"{name}_{i}" if len(images) > 1 else name, image) for i, image in enumerate(images)]
    return [_file(field, name, images)]


class RESTfulImageModelHandle(RESTfulModelHandle):
    def text_to_image(self, prompt, n: int = 1, size: str = "1024*1024", response_format: str = "url", **kwargs) -> dict:
        """POST /v1/images/generations; extra keywords travel as Xinference's ``kwargs`` JSON string."""
        body = {"model": self._model_uid, "prompt": prompt, "n": n, "size": size,
                "response_format": response_format, "kwargs": json.dumps(kwargs)}
        return self._post("/v1/images/generations", body, "create the images")

    def image_to_image(self, image, prompt: str, negative_prompt=None, n: int = 1, size=None,
                       response_format: str = "url", **kwargs) -> dict:
        """POST /v1/images/variations (multipart): images from ``image`` guided by ``prompt``."""
        data = {"model": self._model_uid, "prompt": prompt, "negative_prompt": negative_prompt, "n": n,
                "size": size, "response_format": response_format, "kwargs": json.dumps(kwargs)}
        return self._transport.call_form("/v1/images/variations", "variants the images", data=data,
                                         files=_images("image", image))

    def image_edit(self, images, prompt: str, mask=None, n: int = 1, size=None, response_format: str = "url",
                   **kwargs) -> dict:
        """POST /v1/images/edits (multipart, OpenAI's edit form): one image in ``images``,
        a list in ``images[]``, as Xinference's client sends them; ``mask`` asks for inpainting."""
        data = {"model": self._model_uid, "prompt": prompt, "n": n, "size": size,
                "response_format": response_format, "kwargs": json.dumps(kwargs)}
        files = _images("images[]" if isinstance(images, (list, tuple)) else "images", images)
        if mask is not None:
            files.append(_file("mask", "mask", mask))
        return self._transport.call_form("/v1/images/edits", "edit the images", data=data, files=files)

    def inpainting(self, image, mask_image, prompt: str, negative_prompt=None, n: int = 1, size=None,
                   response_format: str = "url", **kwargs) -> dict:
        """POST /v1/images/inpainting (multipart): repaints the white parts of ``mask_image``."""
        data = {"model": self._model_uid, "prompt": prompt, "negative_prompt": negative_prompt, "n": n,
                "size": size, "response_format": response_format, "kwargs": json.dumps(kwargs)}
        return self._transport.call_form("/v1/images/inpainting", "inpaint the images", data=data,
                                         files=[_file("image", "image", image),
                                                _file("mask_image", "mask_image", mask_image)])

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

    def image_to_video(self, image, prompt: str, negative_prompt=None, n: int = 1, video=None, **kwargs) -> dict:
        """POST /v1/video/generations/image (multipart): a video that starts from ``image``;
        ``video`` is the driving video of character-animation models."""
        files = [_file("image", "image", image)]
        if video is not None:
            files.append(_file("video", "video", video))
        return self._transport.call_form("/v1/video/generations/image", "create the video from image",
                                         data=self._video_fields(prompt, negative_prompt, n, kwargs), files=files)

    def flf_to_video(self, first_frame, last_frame, prompt: str, negative_prompt=None, n: int = 1, **kwargs) -> dict:
        """POST /v1/video/generations/flf (multipart): a video from its first and last frames."""
        files = [_file("first_frame", "image", first_frame), _file("last_frame", "image", last_frame)]
        return self._transport.call_form("/v1/video/generations/flf", "create the video from image",
                                         data=self._video_fields(prompt, negative_prompt, n, kwargs), files=files)

    def _video_fields(self, prompt, negative_prompt, n, kwargs) -> dict:
        return {"model": self._model_uid, "prompt": prompt, "negative_prompt": negative_prompt, "n": n,
                "kwargs": json.dumps(kwargs)}


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
               stream: bool = False, prompt_speech: bytes | None = None, prompt_latent: bytes | None = None, **kwargs):
        """POST /v1/audio/speech: the audio's bytes, or with ``stream`` an iterator of chunks."""
        body = {"model": self._model_uid, "input": input, "voice": voice, "response_format": response_format,
                "speed": speed, "stream": stream, "kwargs": json.dumps(kwargs)}
        if prompt_speech is not None or prompt_latent is not None:
            # As Xinference's client: a voice prompt goes as a form. No engine here speaks
            # like a recording, so the server refuses it by name (a HangarClientError).
            files = [(name, (name, value, "application/octet-stream"))
                     for name, value in (("prompt_speech", prompt_speech), ("prompt_latent", prompt_latent)) if value is not None]
            return self._transport.call_form("/v1/audio/speech", "speech the text", data=body, files=files)
        return self._transport.call_bytes("/v1/audio/speech", "speech the text", json=body, stream=stream)

    def _audio_text(self, path, action, audio, language, prompt, response_format, temperature, granularities, kwargs):
        data = {"model": self._model_uid, "language": language, "prompt": prompt, "response_format": response_format,
                "temperature": temperature, "timestamp_granularities[]": granularities}
        if kwargs is not None:
            data["kwargs"] = json.dumps(kwargs)
        return self._transport.call_form(path, action, data=data, files=[("file", ("file", audio, "application/octet-stream"))])
