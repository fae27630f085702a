"""Audio bytes in and out. An upload (wav, flac, ogg or mp3: what libsndfile,
bundled with the soundfile wheel, reads; webm, mp4/m4a and aac through FFmpeg,
av_audio.py) becomes mono float32 samples at the rate the model needs; synthesised
samples become the format the client asked for."""

import io
import numpy as np

from ...errors import field_error
from . import av_audio
from .pcm_rate import PCM_RATE

INPUT_FORMATS = ("wav", "flac", "ogg", "mp3", "webm", "mp4", "m4a", "aac")
OUTPUT_FORMATS = ("wav", "flac", "pcm", "mp3", "opus", "aac")
_SOUNDFILE_FORMATS = {"wav": ("WAV", "PCM_16"), "flac": ("FLAC", "PCM_16"), "mp3": ("MP3", "MPEG_LAYER_III"),
                      "opus": ("OGG", "OPUS")}
# Opus codes only these rates; other audio is resampled to the highest.
_OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
# The longest audio decoded. A file's size does not bound its length: 21 kB of WAV at
# 1 Hz holds 3 hours, and an hour at 16 kHz took 1.3 GB to decode and resample (and
# 2 M frames at 1 Hz asked numpy for 119 GiB). Checked from the header, before reading.
MAX_SECONDS = 3600
# The highest sample rate recorded audio uses (DXD). A header may say any rate up to
# 2^31 - 1: a 3 kB WAV claiming 4 MHz took 4 GB to resample, and 2^31 - 1 was a 500.
MAX_RATE = 384_000
# The resampling ratio is held to a fraction with a denominator at most this: polyphase
# filters grow with the ratio's terms (about 20 taps per unit), and a prime rate's exact
# ratio to 16 kHz made one of millions of taps. The rate it gives is within 0.1 % of
# the exact one, which speech recognition does not hear.
_MAX_RATIO_TERM = 1000
_UNREADABLE = f"The audio file could not be decoded; expected one of: {', '.join(INPUT_FORMATS)}"


def decode(data, rate: int) -> np.ndarray:
    """Mono float32 samples in [-1, 1] at `rate`. Raises ValueError (the caller's
    fault: ERROR invalid, `param: "file"`, the upload's field on the speech-to-text
    routes, as the route's own checks name it) naming the formats it reads."""
    import soundfile

    if not isinstance(data, (bytes, bytearray)) or len(data) == 0:
        raise field_error("file", f"The audio file is empty; expected one of: {', '.join(INPUT_FORMATS)}")
    demuxer = av_audio.container_of(bytes(data[:16]))
    if demuxer is not None:
        mono, source_rate = av_audio.read_mono(bytes(data), demuxer, _check_length, _UNREADABLE)
        return _finish(mono, source_rate, rate)
    try:
        info = soundfile.info(io.BytesIO(bytes(data)))
    except Exception as exc:  # soundfile.LibsndfileError and friends: the bytes are not audio it knows
        # libsndfile's own text names a Python object, not the problem; the formats help more.
        raise field_error("file", _UNREADABLE) from exc
    # An MP3's header length is libsndfile's estimate (a VBR file's can be far off); its
    # frames are counted as decoded below, and its sample rate is a real one anyway.
    if info.format != "MP3":
        _check_length(info.frames, info.samplerate)
    mono, source_rate = _read_mono(soundfile, data, info.samplerate)
    return _finish(mono, source_rate, rate)


def _finish(mono: np.ndarray, source_rate: int, rate: int) -> np.ndarray:
    if mono.shape[0] == 0:
        raise field_error("file", "The audio file holds no samples")
    # A float file may hold NaN or infinities: silence and full scale, as a player plays them.
    mono = np.clip(np.nan_to_num(mono, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
    return resample(mono, int(source_rate), rate)


# Frames decoded at a time: the length is checked as they come, so an MP3 whose header
# understates it (or a VBR estimate) is refused after an hour's worth, not after all of it
# (25 MB of 8 kHz MP3 said 7 hours and decoded to 873 MB before the refusal).
_BLOCK_FRAMES = 1 << 20


def _read_mono(soundfile, data, header_rate: int) -> tuple[np.ndarray, int]:
    blocks = []
    frames = 0
    try:
        with soundfile.SoundFile(io.BytesIO(bytes(data))) as f:
            source_rate = int(f.samplerate or header_rate)
            while True:
                block = f.read(_BLOCK_FRAMES, dtype="float32", always_2d=True)
                if block.shape[0] == 0:
                    break
                frames += block.shape[0]
                _check_length(frames, source_rate)  # a header may understate (an MP3's is an estimate)
                blocks.append(block.mean(axis=1))
    except ValueError:
        raise
    except Exception as exc:
        raise field_error("file", _UNREADABLE) from exc
    return (np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.float32)), source_rate


def _check_length(frames: int, rate: int) -> None:
    if rate <= 0:
        raise field_error("file", f"The audio file's sample rate ({rate} Hz) is not one audio has")
    seconds = frames / rate
    if seconds > MAX_SECONDS:
        raise field_error("file", f"The audio is {seconds:,.0f} s long; at most {MAX_SECONDS} s ({MAX_SECONDS // 60} minutes) is transcribed in one request: send it in parts")
    if rate > MAX_RATE:
        raise field_error("file", f"The audio file's sample rate ({rate:,} Hz) is above {MAX_RATE:,} Hz, the highest recorded audio uses")


def resample(samples: np.ndarray, source_rate: int, rate: int) -> np.ndarray:
    if source_rate == rate:
        return samples.astype(np.float32, copy=False)
    from fractions import Fraction

    from scipy.signal import resample_poly

    # Polyphase resampling filters as it goes, so no aliasing from a plain interpolation.
    ratio = Fraction(rate, source_rate)
    if max(ratio.numerator, ratio.denominator) > _MAX_RATIO_TERM:
        ratio = ratio.limit_denominator(_MAX_RATIO_TERM)
    return resample_poly(samples, ratio.numerator, ratio.denominator).astype(np.float32)


def to_pcm16(samples: np.ndarray) -> bytes:
    """16-bit signed little-endian, the layout of OpenAI's `pcm` format."""
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return (clipped * 32767.0).astype("<i2").tobytes()


def encode(samples: np.ndarray, rate: int, response_format: str) -> bytes:
    check_output_format(response_format)
    if response_format == "pcm":
        # OpenAI's pcm is 24 kHz whatever the engine's rate (pcm_rate.py).
        return to_pcm16(resample(np.asarray(samples, dtype=np.float32), rate, PCM_RATE))
    if response_format == "aac":
        return av_audio.write_aac(samples, rate)
    if response_format == "opus" and rate not in _OPUS_RATES:
        samples, rate = resample(np.asarray(samples, dtype=np.float32), rate, 48000), 48000
    import soundfile

    container, subtype = _SOUNDFILE_FORMATS[response_format]
    buffer = io.BytesIO()
    soundfile.write(buffer, np.asarray(samples, dtype=np.float32), rate, format=container, subtype=subtype)
    return buffer.getvalue()


def check_output_format(response_format) -> None:
    if response_format not in OUTPUT_FORMATS:
        raise ValueError(f"response_format must be one of {', '.join(OUTPUT_FORMATS)}, got {response_format!r}")


def streaming_wav_header(rate: int, channels: int = 1, bits: int = 16) -> bytes:
    """A WAV header for audio whose length is not known yet: the sizes are the
    maximum, the convention players and decoders accept for streamed WAV."""
    block = channels * bits // 8
    unknown = 0xFFFFFFFF
    return (b"RIFF" + unknown.to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
            + (1).to_bytes(2, "little") + channels.to_bytes(2, "little") + rate.to_bytes(4, "little")
            + (rate * block).to_bytes(4, "little") + block.to_bytes(2, "little") + bits.to_bytes(2, "little")
            + b"data" + unknown.to_bytes(4, "little"))


def chunked(data: bytes, size: int = 32768):
    """A whole encoded file as stream chunks (formats that cannot be encoded piecewise)."""
    for start in range(0, len(data), size):
        yield data[start:start + size]
