"""The `espeak` engine: speech from the espeak-ng program (a Debian package, not a
Python one). Text goes in on stdin, never on the command line, so no input can be
read as an option. espeak-ng speaks 16-bit mono at 22050 Hz."""

import os
import shutil
import subprocess
import tempfile

from ...errors import InvalidModel, field_error
from ..base import Engine, Progress
from ..media_io import audio_codec
from ..media_io.pcm_rate import PcmRateStream
from .voices import choose_voice, installed_variants, installed_voices

PROGRAM = "espeak-ng"
DEFAULT_WORDS_PER_MINUTE = 175  # espeak-ng's own default: speed 1.0
# espeak-ng speaks no slower than 80 words a minute; fast speech (its sonic speed-up)
# goes past 450 to 4.0 times its default, OpenAI's fastest.
MIN_WPM, MAX_WPM = 80, 700
MAX_INPUT_CHARS = 4096  # OpenAI's limit for speech input
WAV_HEADER_BYTES = 44  # what espeak-ng --stdout writes before the samples
READ_BYTES = 8192


class EspeakEngine(Engine):
    name = "espeak"
    abilities = ("text2audio",)

    def __init__(self):
        self._program = None
        self._voices: list[str] = []
        self._variants: list[str] = []
        self._default_voice = "en-us"
        self._rate = 22050

    def load(self, spec: dict, progress: Progress) -> None:
        self._program = shutil.which(PROGRAM)
        if self._program is None:
            raise InvalidModel(f"The espeak engine needs the {PROGRAM} program on the PATH "
                               f"(Debian/Ubuntu: apt-get install espeak-ng)")
        self._voices = installed_voices(self._program)
        self._variants = installed_variants(self._program)
        config = spec.get("model_config") or {}
        voice = config.get("voice", "en-us") if isinstance(config, dict) else "en-us"
        if voice not in self._voices:
            raise InvalidModel(f"The default voice {voice!r} is not installed with {PROGRAM}")
        self._default_voice = voice
        progress(1.0, "load", f"{PROGRAM} ready with {len(self._voices)} voices")

    def describe(self) -> dict:
        return {"voices": list(self._voices), "default_voice": self._default_voice, "sample_rate": self._rate}

    def methods(self) -> dict:
        return {"speech": self.speech, "voices": self.voices}

    def voices(self) -> list[str]:
        return list(self._voices)

    def speech(self, input, voice=None, speed=1.0, response_format="mp3", stream=False, **_ignored):
        command = self._command(input, voice, speed)
        audio_codec.check_output_format(response_format)
        if stream:
            return self._stream(command, input, response_format)
        return self._encoded(command, input, response_format)

    def _command(self, text, voice, speed) -> list[str]:
        if not isinstance(text, str) or not text.strip():
            raise field_error("input", "input must be a non-empty string")
        if len(text) > MAX_INPUT_CHARS:
            raise field_error("input", f"input is {len(text)} characters long; the limit is {MAX_INPUT_CHARS}")
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not 0.25 <= speed <= 4.0:
            raise field_error("speed", f"speed must be a number from 0.25 to 4.0, got {speed!r}")
        wpm = round(DEFAULT_WORDS_PER_MINUTE * speed)
        if wpm < MIN_WPM:
            # Said, not clamped: a speed asked for and not given changed the audio silently.
            raise field_error("speed", f"speed {speed} is slower than espeak-ng speaks: its slowest is "
                                       f"{MIN_WPM / DEFAULT_WORDS_PER_MINUTE:.2f} ({MIN_WPM} words a minute)")
        wpm = min(MAX_WPM, wpm)
        chosen = choose_voice(voice, self._default_voice, self._voices, self._variants)
        return [self._program, "-v", chosen, "-s", str(wpm), "--stdin"]

    def _stream(self, command, text, response_format):
        """Audio as espeak-ng makes it: wav and pcm pass its samples on as they come
        (wav behind a header for a stream of unknown length); flac and mp3 cannot be
        cut mid-encoding here, so they come whole, in pieces."""
        if response_format not in ("wav", "pcm"):
            return audio_codec.chunked(self._encoded(command, text, response_format))
        return self._live(command, text, response_format)

    def _encoded(self, command, text, response_format) -> bytes:
        # -w writes a complete WAV file (its header holds the real sizes, unlike --stdout's).
        with tempfile.TemporaryDirectory(prefix="hangar-espeak-") as folder:
            path = os.path.join(folder, "speech.wav")
            _run(command + ["-w", path], text)
            with open(path, "rb") as f:
                wav = f.read()
        if response_format == "wav":
            return wav
        return audio_codec.encode(audio_codec.decode(wav, self._rate), self._rate, response_format)

    def _live(self, command, text, response_format):
        process = subprocess.Popen(command + ["--stdout"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        try:
            process.stdin.write(text.encode("utf-8"))
            process.stdin.close()
            header = process.stdout.read(WAV_HEADER_BYTES)
            if len(header) < WAV_HEADER_BYTES:
                raise RuntimeError(f"{PROGRAM} produced no audio: {process.stderr.read().decode(errors='replace').strip()}")
            if response_format == "wav":
                yield audio_codec.streaming_wav_header(self._rate)
            # pcm is OpenAI's 24 kHz (pcm_rate.py); wav says its own rate in its header.
            convert = PcmRateStream(self._rate).feed if response_format == "pcm" else None
            while True:
                piece = process.stdout.read1(READ_BYTES)
                if not piece:
                    break
                piece = convert(piece) if convert else piece
                if piece:
                    yield piece
            if process.wait(timeout=30) != 0:
                raise RuntimeError(f"{PROGRAM} failed: {process.stderr.read().decode(errors='replace').strip()}")
        finally:
            # An aborted stream (client gone) stops the program too.
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()


def _run(command: list[str], text: str) -> None:
    result = subprocess.run(command, input=text.encode("utf-8"), capture_output=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"{PROGRAM} failed (exit {result.returncode}): "
                           f"{result.stderr.decode(errors='replace').strip()}")
