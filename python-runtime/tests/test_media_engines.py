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
    # pcm is OpenAI's 24 kHz whatever the samples' rate: one second is 48,000 bytes.
    assert len(audio_codec.encode(tone, rate, "pcm")) == 2 * 24000
    # Streamed, piece by odd-sized piece, it is the same second at 24 kHz.
    from hangar_runtime.engines.media_io.pcm_rate import PcmRateStream

    raw, stream = audio_codec.to_pcm16(tone), PcmRateStream(rate)
    pieces = b"".join(stream.feed(raw[i:i + 777]) for i in range(0, len(raw), 777))
    whole = np.frombuffer(audio_codec.encode(tone, rate, "pcm"), dtype="<i2")
    streamed = np.frombuffer(pieces, dtype="<i2")
    assert abs(len(streamed) - len(whole)) <= 1
    n = min(len(streamed), len(whole))
    assert np.corrcoef(streamed[100:n - 100], whole[100:n - 100])[0, 1] > 0.9999
    with pytest.raises(ValueError, match="expected one of: wav, flac, ogg, mp3, webm, mp4, m4a, aac"):
        audio_codec.decode(b"RIFF\x00\x00\x00\x00WAVEgarbage", 16000)
    with pytest.raises(ValueError, match="response_format must be one of"):
        audio_codec.encode(tone, rate, "ogg")


def _wav(frames: int, rate: int) -> bytes:
    """A 16-bit mono WAV of `frames` silent samples at `rate` Hz (a size that says nothing of its length)."""
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, np.zeros(frames, dtype=np.float32), rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def test_audio_longer_than_an_hour_is_refused_from_its_header_before_it_is_decoded():
    # 21 kB holding 3 hours at 1 Hz (it took 2.3 GB to resample), and 4 MB of 23 days
    # (numpy was asked for 119 GiB and the answer was a 500).
    for frames in (3 * 3600, 2_000_000):
        with pytest.raises(ValueError, match="at most 3600 s .* send it in parts"):
            audio_codec.decode(_wav(frames, 1), 16000)
    assert len(audio_codec.decode(_wav(16000, 8000), 16000)) == 32000


def test_a_made_up_sample_rate_is_refused_or_resampled_in_bounded_memory():
    # A 3 kB WAV claiming 4,000,037 Hz (a prime) made scipy build a filter of ~80 M taps:
    # 4 GB and 18 s; the header's largest rate asked numpy for 320 GiB (a 500).
    for rate in (4_000_037, 2**31 - 1):
        with pytest.raises(ValueError, match="above 384,000 Hz"):
            audio_codec.decode(_wav(1600, rate), 16000)
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # A prime rate under the limit: its ratio to 16 kHz is held to small terms.
    out = audio_codec.decode(_wav(383_987, 383_987), 16000)
    assert abs(len(out) - 16000) <= 16  # one second, within 0.1 %
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: under 200 MB more


@needs_espeak
def test_espeak_lists_voices_and_refuses_unknown_ones(espeak):
    assert "en-us" in espeak.voices()
    assert espeak.describe()["default_voice"] == "en-us"
    # OpenAI's voice names mean the default voice; a variant of an installed voice is fine.
    assert espeak.speech("hi", voice="alloy", response_format="wav")[:4] == b"RIFF"
    assert espeak.speech("hi", voice="en-us+f3", response_format="wav")[:4] == b"RIFF"
    with pytest.raises(ValueError, match="Unknown voice 'nope'"):
        espeak.speech("hi", voice="nope")
    # A variant espeak-ng does not have was spoken in the base voice, without a word.
    assert espeak.speech("hi", voice="en+Alex", response_format="wav") != espeak.speech("hi", voice="en", response_format="wav")
    with pytest.raises(ValueError, match=r"Unknown voice variant 'alex' in 'en\+alex'; did you mean en\+Alex\?"):
        espeak.speech("hi", voice="en+alex")
    with pytest.raises(ValueError, match="Unknown voice variant '../../x'"):
        espeak.speech("hi", voice="en+../../x")
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


@needs_espeak
def test_pocketsphinx_hears_a_file_the_same_whatever_came_before_and_stops_when_aborted(espeak):
    from hangar_runtime.call_abort import CallAborted, running_call
    from hangar_runtime.engines.pocketsphinx_engine.engine import PocketsphinxEngine

    engine = PocketsphinxEngine()
    engine.load({}, no_progress)
    door = espeak.speech("please open the door and turn on the light", response_format="wav")
    other = espeak.speech("the weather today is cold and windy with a chance of rain later", response_format="mp3")
    # The decoder's adaptive state carried over between calls: one caller's audio changed another's text.
    first = engine.transcribe(door)["text"]
    engine.transcribe(other)
    engine.transcribe(other)
    assert engine.transcribe(door)["text"] == first
    # A call whose client went away stops between the pieces it is fed.
    with running_call(lambda: True), pytest.raises(CallAborted):
        engine.transcribe(door)
    assert engine.transcribe(door)["text"] == first


def _container(samples, rate: int, muxer: str, codec: str) -> bytes:
    """Audio as a browser (WebM/Opus), a phone (M4A/AAC) or an AAC stream carries it, made with FFmpeg."""
    import av

    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=muxer) as container:
        stream = container.add_stream(codec, rate=rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(np.asarray(samples, dtype=np.float32).reshape(1, -1), format="flt", layout="mono")
        frame.sample_rate = rate
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            container.mux(packet)
    return buffer.getvalue()


@needs_espeak
def test_pocketsphinx_hears_webm_m4a_and_aac_uploads_and_speech_comes_as_opus_and_aac(espeak):
    from hangar_runtime.engines.media_io import av_audio
    from hangar_runtime.engines.pocketsphinx_engine.engine import PocketsphinxEngine
    from hangar_runtime.errors import field_error

    engine = PocketsphinxEngine()
    engine.load({}, no_progress)
    wav = espeak.speech("please open the door and turn on the light", speed=150 / 175, response_format="wav")
    samples = audio_codec.decode(wav, 48000)
    for muxer, codec in (("webm", "libopus"), ("ipod", "aac"), ("adts", "aac")):
        upload = _container(samples, 48000, muxer, codec)
        assert "door" in engine.transcribe(upload)["text"], muxer
        # Cut to its first bytes, it is refused as unreadable, naming the upload's field.
        with pytest.raises(ValueError, match="could not be decoded|holds no samples|sample rate") as refused:
            engine.transcribe(upload[:8])
        assert getattr(refused.value, "param", None) == "file"
        # Cut mid-way (a recording stopped), what came before is heard.
        if muxer == "adts":
            assert len(audio_codec.decode(upload[: len(upload) // 2 + 3], 16000)) > 16000 * 0.5
    # A container may name any codec FFmpeg bundles: only the ones such uploads carry are decoded.
    with pytest.raises(ValueError, match="audio is mp2, which is not read here") as refused:
        engine.transcribe(_container(samples, 48000, "matroska", "mp2"))
    assert refused.value.param == "file"
    # The length is checked as frames come, not after all are held.
    seen = []

    def check(frames, rate):
        seen.append(frames)
        if frames > rate:
            raise field_error("file", "too long")

    with pytest.raises(ValueError, match="too long"):
        av_audio.read_mono(_container(np.zeros(48000 * 5, dtype=np.float32), 48000, "webm", "libopus"), "matroska", check, "x")
    assert max(seen) < 48000 * 2
    # OpenAI's other speech formats: Ogg Opus (at an Opus rate) and ADTS AAC, each about the wav's length.
    seconds = len(audio_codec.decode(wav, 16000)) / 16000
    assert av_audio.write_aac(np.zeros(0, dtype=np.float32), 22050) == b""  # an empty frame failed the encoder
    for fmt, magic in (("opus", b"OggS"), ("aac", b"\xff\xf1")):
        spoken = espeak.speech("please open the door and turn on the light", speed=150 / 175, response_format=fmt)
        assert spoken[: len(magic)] == magic, fmt
        assert abs(len(audio_codec.decode(spoken, 16000)) / 16000 - seconds) < 0.2, fmt


def test_pocketsphinx_gets_audio_in_half_second_pieces_so_the_heartbeat_thread_runs():
    """pocketsphinx holds the GIL for a whole process_raw call: 20 s of noise in one call
    starved the runtime's heartbeat and the replica was killed as dead. The real decoder
    is watched (every call goes on to it) for the size of each piece it is fed."""
    from hangar_runtime.engines.pocketsphinx_engine.engine import PocketsphinxEngine

    engine = PocketsphinxEngine()
    engine.load({}, no_progress)
    real, pieces = engine._decoder, []

    class Watched:
        def __getattr__(self, name):
            return getattr(real, name)

        def process_raw(self, data, **kwargs):
            if not kwargs.get("no_search"):  # the pass that only takes the cepstral mean is fast
                pieces.append(len(data))
            return real.process_raw(data, **kwargs)

    engine._decoder = Watched()
    rng = np.random.default_rng(0)
    noise = np.zeros(16000 * 6, dtype=np.float32)
    noise[16000:48000] = rng.standard_normal(32000).astype(np.float32) * 0.3
    buffer = io.BytesIO()
    import soundfile

    soundfile.write(buffer, noise, 16000, format="WAV", subtype="PCM_16")
    engine.transcribe(buffer.getvalue())
    assert sum(pieces) == 2 * len(noise) and max(pieces) <= 16000


def test_an_image_upload_past_40_million_pixels_is_refused_from_its_header():
    # OCR and image models: a few kB of PNG declaring 7000x7000 took gigabytes to read.
    from PIL import Image

    from hangar_runtime.engines.media_io import image_codec

    buffer = io.BytesIO()
    Image.new("1", (7000, 7000)).save(buffer, format="PNG")
    with pytest.raises(ValueError, match="7000x7000 pixels; at most 40000000 pixels"):
        image_codec.decode(buffer.getvalue())
    buffer = io.BytesIO()
    Image.new("1", (6000, 6000)).save(buffer, format="PNG")
    assert image_codec.decode(buffer.getvalue()).size == (6000, 6000)


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


@needs_tesseract
def test_tesseract_reads_a_pdf_page_by_page():
    """A PDF upload (Xinference's OCR route reads them): each page rasterized and read,
    the texts joined, each page's answer under `pages`; `pages` picks some, and bad
    selections, resolutions and documents are the caller's fault."""
    from PIL import Image, ImageDraw, ImageFont

    from hangar_runtime.engines.tesseract.engine import TesseractEngine

    engine = TesseractEngine()
    engine.load({"model_config": {"lang": "eng"}}, no_progress)
    sheets = []
    for words in ("Quiet engines 7", "Second page 42"):
        sheet = Image.new("RGB", (600, 110), "white")
        ImageDraw.Draw(sheet).text((30, 30), words, fill="black", font=ImageFont.load_default(size=40))
        sheets.append(sheet)
    buffer = io.BytesIO()
    # 72 dpi in the PDF: each page is 600x110 points, rendered at `dpi` / 72 of that.
    sheets[0].save(buffer, format="PDF", save_all=True, append_images=sheets[1:], resolution=72.0)
    pdf = buffer.getvalue()
    assert pdf.startswith(b"%PDF")
    result = engine.ocr(pdf, dpi=72)
    assert result["text"] == "Quiet engines 7\n\nSecond page 42"
    assert [p["page"] for p in result["pages"]] == [1, 2]
    assert [w["text"] for w in result["pages"][1]["result"]["words"]] == ["Second", "page", "42"]
    assert result["lang"] == "eng"
    assert engine.ocr(pdf, pages=[2], dpi=72)["text"] == "Second page 42"
    assert engine.ocr(pdf, pages=1, dpi=72)["text"] == "Quiet engines 7"
    for pages, says in ((3, "out of range"), ([], "non-empty list"), (["1"], "non-empty list"), (True, "non-empty list")):
        with pytest.raises(ValueError, match=says) as refused:
            engine.ocr(pdf, pages=pages)
        assert refused.value.param == "pages"
    with pytest.raises(ValueError, match="dpi must be a positive number"):
        engine.ocr(pdf, dpi=0)
    # A page that would rasterize past the pixel limit is refused before it is drawn.
    # 14,400 points square is a legal page: 1.6 G pixels at the default 200 dpi.
    buffer = io.BytesIO()
    Image.new("1", (14400, 14400), 1).save(buffer, format="PDF", resolution=72.0)
    with pytest.raises(ValueError, match="at most 40000000 pixels: ask for a lower `dpi`"):
        engine.ocr(buffer.getvalue())
    with pytest.raises(ValueError, match="could not be read"):
        engine.ocr(b"%PDF-1.7 not really a pdf")
