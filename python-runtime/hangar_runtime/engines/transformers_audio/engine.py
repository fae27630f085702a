"""The `transformers_audio` engine: a Transformers pipeline per ability.
`audio2text` loads an automatic-speech-recognition pipeline (Whisper and the other
speech-to-text models transformers knows), `text2audio` a text-to-audio one. The
model folder comes from `model_uri` or a hub download, as for the other PyTorch
engines."""

from ...errors import InvalidModel, exception_text, field_error
from ..base import Engine, Progress
from ..hub_download import DOWNLOAD_SHARE, model_folder
from ..lean_imports import import_transformers_without_sklearn
from ..media_io import audio_codec
from ..media_io.transcript import Transcript

_TASKS = {"audio2text": "automatic-speech-recognition", "text2audio": "text-to-audio"}


class TransformersAudioEngine(Engine):
    name = "transformers_audio"

    def __init__(self):
        self.abilities: tuple[str, ...] = ()
        self._pipeline = None
        self._rate = 16000
        self._whisper = False
        self._timestamps = False

    def load(self, spec: dict, progress: Progress) -> None:
        wanted = [a for a in (spec.get("model_ability") or []) if a in _TASKS]
        if not wanted:
            raise InvalidModel(f"The transformers audio engine serves {', '.join(_TASKS)} models; "
                               f"this one has abilities {spec.get('model_ability')!r}")
        ability = wanted[0]
        path = model_folder(spec, progress)
        progress(DOWNLOAD_SHARE, "load", f"Loading {path}")
        import_transformers_without_sklearn()
        import transformers

        from ..torch_device import pick_device

        try:
            self._pipeline = transformers.pipeline(_TASKS[ability], model=path, device=pick_device())
        except (OSError, ValueError, KeyError) as exc:
            raise InvalidModel(f"Cannot load {path} as a {_TASKS[ability]} model: {exception_text(exc)}") from exc
        self.abilities = (ability,)
        if ability == "audio2text":
            extractor = self._pipeline.feature_extractor
            if extractor is None:
                raise InvalidModel(f"{path} has no feature extractor; a speech-to-text model needs one")
            self._rate = int(extractor.sampling_rate)
            self._whisper = getattr(self._pipeline.model.config, "model_type", "") == "whisper"
            self._timestamps = self._whisper and _has_timestamp_tokens(self._pipeline.tokenizer)
        progress(1.0, "load", f"Loaded {path} on {self._pipeline.device}")

    def describe(self) -> dict:
        return {"sample_rate": self._rate} if self.abilities == ("audio2text",) else {}

    def methods(self) -> dict:
        if self.abilities == ("audio2text",):
            return {"transcribe": self.transcribe, "translate": self.translate}
        return {"speech": self.speech}

    def transcribe(self, audio, language=None, prompt=None, temperature=None, timestamps=False, **_ignored) -> dict:
        return self._recognise(audio, "transcribe", language, temperature, timestamps)

    def translate(self, audio, prompt=None, temperature=None, timestamps=False, **_ignored) -> dict:
        if not self._whisper:
            raise ValueError("This speech model cannot translate; only Whisper-family models can")
        return self._recognise(audio, "translate", None, temperature, timestamps)

    def _recognise(self, audio, task, language, temperature, timestamps) -> dict:
        samples = audio_codec.decode(audio, self._rate)
        generate_kwargs = {}
        if self._whisper:
            generate_kwargs["task"] = task
            if language:
                generate_kwargs["language"] = language
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature > 0:
            generate_kwargs.update(do_sample=True, temperature=float(temperature))
        kwargs = {"generate_kwargs": generate_kwargs}
        # Segment timings come from Whisper's timestamp tokens; a model without them
        # (or another family) gets one segment spanning the audio.
        if timestamps and self._timestamps:
            kwargs["return_timestamps"] = True
        result = self._pipeline({"raw": samples, "sampling_rate": self._rate}, **kwargs)
        duration = len(samples) / self._rate
        transcript = Transcript(language=language, duration=duration)
        chunks = result.get("chunks") or []
        if chunks:
            for chunk in chunks:
                start, end = chunk.get("timestamp") or (0.0, duration)
                transcript.add_segment(chunk.get("text", "").strip(), start or 0.0, end if end is not None else duration)
        else:
            transcript.add_segment(result.get("text", "").strip(), 0.0, duration)
        return transcript.as_dict()

    def speech(self, input, voice=None, speed=1.0, response_format="mp3", stream=False, **_ignored):
        if not isinstance(input, str) or not input.strip():
            raise field_error("input", "input must be a non-empty string")
        audio_codec.check_output_format(response_format)
        result = self._pipeline(input)
        samples = result["audio"]
        rate = int(result["sampling_rate"])
        # Pipelines return (channels, samples) or (samples,); the service sends mono.
        if getattr(samples, "ndim", 1) > 1:
            samples = samples.mean(axis=0)
        encoded = audio_codec.encode(samples, rate, response_format)
        return audio_codec.chunked(encoded) if stream else encoded


def _has_timestamp_tokens(tokenizer) -> bool:
    token_id = tokenizer.convert_tokens_to_ids("<|0.00|>")
    return token_id is not None and token_id != tokenizer.unk_token_id
