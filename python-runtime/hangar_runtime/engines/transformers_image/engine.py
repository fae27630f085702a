"""The `transformers_image` engine: an image-to-text model (AutoModelForImageTextToText:
VisionEncoderDecoder captioners, GOT-OCR 2.0, ...) and its processor. Serves `ocr`
(the /v1/images/ocr route): the model's text for the image."""

from ...errors import InvalidModel, exception_text
from ..base import Engine, Progress
from ..hub_download import DOWNLOAD_SHARE, model_folder
from ..lean_imports import import_transformers_without_sklearn
from ..media_io.image_codec import decode
from ..media_io.pdf_pages import is_pdf, ocr_pdf

DEFAULT_MAX_TOKENS = 512


class TransformersImageEngine(Engine):
    name = "transformers_image"
    abilities = ("ocr",)

    def __init__(self):
        self._model = None
        self._processor = None
        self._tokenizer = None

    def load(self, spec: dict, progress: Progress) -> None:
        path = model_folder(spec, progress)
        progress(DOWNLOAD_SHARE, "load", f"Loading {path}")
        import_transformers_without_sklearn()
        import transformers

        from ..torch_device import pick_device

        try:
            self._model = transformers.AutoModelForImageTextToText.from_pretrained(path).to(pick_device()).eval()
            processor = transformers.AutoProcessor.from_pretrained(path)
            # A model saved as separate parts (image processor + tokenizer, the usual
            # VisionEncoderDecoder captioner) has no joint processor: AutoProcessor then
            # gives one of the parts, and the other is loaded on its own.
            if isinstance(processor, transformers.PreTrainedTokenizerBase):
                self._tokenizer, self._processor = processor, transformers.AutoImageProcessor.from_pretrained(path)
            elif hasattr(processor, "tokenizer"):
                self._tokenizer, self._processor = processor.tokenizer, processor
            else:
                self._tokenizer, self._processor = transformers.AutoTokenizer.from_pretrained(path), processor
        except (OSError, ValueError, KeyError) as exc:
            raise InvalidModel(f"Cannot load {path} as an image-to-text model: {exception_text(exc)}") from exc
        progress(1.0, "load", f"Loaded {path} on {self._model.device}")

    def methods(self) -> dict:
        return {"ocr": self.ocr}

    def ocr(self, image, prompt=None, max_tokens=DEFAULT_MAX_TOKENS, pages=None, dpi=None, **_ignored) -> dict:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= 8192:
            raise ValueError(f"max_tokens must be an integer from 1 to 8192, got {max_tokens!r}")
        if is_pdf(image):
            return ocr_pdf(image, lambda page: self._read(page, prompt, max_tokens), pages=pages, dpi=dpi)
        return self._read(image, prompt, max_tokens)

    def _read(self, image, prompt, max_tokens: int) -> dict:
        import torch

        picture = decode(image)
        if prompt is not None and hasattr(self._processor, "tokenizer"):
            inputs = self._processor(images=picture, text=prompt, return_tensors="pt")
        else:
            inputs = self._processor(images=picture, return_tensors="pt")
        inputs = {k: v.to(self._model.device) if hasattr(v, "to") else v for k, v in inputs.items()}
        # Decoder-only models echo their prompt tokens first; only what follows is the answer.
        prompt_length = inputs["input_ids"].shape[1] if "input_ids" in inputs else 0
        # Generating past the text decoder's positions fails deep in torch; stop there instead.
        room = _decoder_positions(self._model.config)
        if room is not None:
            max_tokens = max(1, min(max_tokens, room - prompt_length - 1))
        with torch.inference_mode():
            output = self._model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False)
        text = self._tokenizer.decode(output[0][prompt_length:], skip_special_tokens=True)
        return {"text": text.strip()}


def _decoder_positions(config) -> int | None:
    """How many positions the text decoder has (GPT-2's n_positions, or max_position_embeddings)."""
    for part in (getattr(config, "decoder", None), getattr(config, "text_config", None), config):
        if part is None:
            continue
        for name in ("max_position_embeddings", "n_positions"):
            value = getattr(part, name, None)
            if isinstance(value, int) and value > 0:
                return value
    return None
