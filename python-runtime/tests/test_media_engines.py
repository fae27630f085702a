"""The audio and image engines called directly, with the real programs and packages
they wrap (espeak-ng, tesseract, pocketsphinx, soundfile, Pillow). The end-to-end
path through the server is test/integration/media-audio-image.test.ts."""

import io
import shutil

import numpy as np
import pytest

from hangar_runtime.engines.media_io import audio_codec
from hangar_runtime.errors import InvalidModel

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")


def no_progress(*_args, **_kwargs):
    pass


@pytest.fixture(scope="module")
def espeak():
    from hangar_runtime.engines.espeak.engine import EspeakEngine

    engine = EspeakEngine()
    engine.load({"model_config": {"voice": "en-us"}}, no_progress)
    return engine


def test_codec_round_trip_resamples_and_encodes_each_format():
    rate = 22050
    tone = (0.5 * np.sin(2 * np.pi * 440 * np.arange(rate) / rate)).astype(np.float32)
    for fmt in ("wav", "flac", "mp3"):
        back = audio_codec.decode(audio_codec.encode(tone, rate, fmt), 16000)
        # One second at 16 kHz; mp3 pads a few frames of its own.
        assert abs(len(back) - 16000) < 2000, fmt
        assert 0.2 < float(np.abs(back).max()) <= 1.0
    assert len(audio_codec.encode(tone, rate, "pcm")) == 2 * rate
    with pytest.raises(ValueError, match="expected one of: wav, flac, ogg, mp3"):
        audio_codec.decode(b"RIFF\x00\x00\x00\x00WAVEgarbage", 16000)
    with pytest.raises(ValueError, match="response_format must be one of"):
        audio_codec.encode(tone, rate, "opus")


@needs_espeak
def test_espeak_lists_voices_and_refuses_unknown_ones(espeak):
    assert "en-us" in espeak.voices()
    assert espeak.describe()["default_voice"] == "en-us"
    # OpenAI's voice names mean the default voice; a variant of an installed voice is fine.
    assert espeak.speech("hi", voice="alloy", response_format="wav")[:4] == b"RIFF"
    assert espeak.speech("hi", voice="en-us+f3", response_format="wav")[:4] == b"RIFF"
    with pytest.raises(ValueError, match="Unknown voice 'nope'"):
        espeak.speech("hi", voice="nope")
    with pytest.raises(ValueError, match="speed must be"):
        espeak.speech("hi", speed=9)
    with pytest.raises(ValueError, match="non-empty"):
        espeak.speech("   ")
    # Input on stdin: text that looks like an option is spoken, not obeyed.
    assert len(espeak.speech("--help", response_format="pcm")) > 1000


@needs_espeak
def test_espeak_streams_wav_as_it_speaks(espeak):
    pieces = list(espeak.speech("one two three four five six", response_format="wav", stream=True))
    assert pieces[0][:4] == b"RIFF"
    whole = b"".join(pieces)
    samples = audio_codec.decode(whole, 22050)
    assert len(samples) > 22050  # over a second of speech


@needs_espeak
def test_pocketsphinx_hears_keywords_in_espeak_speech(espeak):
    from hangar_runtime.engines.pocketsphinx_engine.engine import PocketsphinxEngine

    engine = PocketsphinxEngine()
    engine.load({}, no_progress)
    wav = espeak.speech("please open the door and turn on the light", speed=150 / 175, response_format="wav")
    result = engine.transcribe(wav)
    assert "door" in result["text"] and "open" in result["text"]
    assert result["segments"] and result["segments"][0]["end"] <= result["duration"]
    assert "door" in [w["word"] for w in result["words"]]
    with pytest.raises(ValueError, match="English only"):
        engine.transcribe(wav, language="de")


@needs_tesseract
def test_tesseract_reads_rendered_text_with_boxes():
    from PIL import Image, ImageDraw, ImageFont

    from hangar_runtime.engines.tesseract.engine import TesseractEngine

    engine = TesseractEngine()
    engine.load({"model_config": {"lang": "eng"}}, no_progress)
    image = Image.new("RGB", (600, 110), "white")
    ImageDraw.Draw(image).text((30, 30), "Quiet engines 7", fill="black", font=ImageFont.load_default(size=40))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=95)
    result = engine.ocr(buffer.getvalue())
    assert result["text"] == "Quiet engines 7"
    assert [w["text"] for w in result["words"]] == ["Quiet", "engines", "7"]
    with pytest.raises(ValueError, match="not installed"):
        engine.ocr(buffer.getvalue(), lang="xxx")
    with pytest.raises(ValueError, match="expected one of: png, jpeg"):
        engine.ocr(b"not an image")
    broken = TesseractEngine()
    with pytest.raises(InvalidModel, match="not installed"):
        broken.load({"model_config": {"lang": "klingon"}}, no_progress)
