"""Audio in the containers libsndfile does not read, through FFmpeg's libraries (the
PyAV wheel bundles them): WebM (a browser's MediaRecorder), MP4/M4A (a phone's
recordings) and AAC, which OpenAI's speech-to-text takes; and speech written as AAC,
one of OpenAI's speech formats. FFmpeg reads hundreds of formats: only the demuxer a
file's first bytes name is opened (`format=`), and only an audio codec such files
carry is decoded (a container may name any codec FFmpeg bundles)."""

import io
from collections.abc import Callable

import numpy as np

from ...errors import field_error

#: The audio codecs WebM, MP4/M4A and AAC files carry; any other is refused undecoded.
CODECS = frozenset({"opus", "vorbis", "aac", "aac_latm", "mp3", "mp3float", "flac", "alac"})

#: Demuxer by the name the routes give the format.
DEMUXERS = {"webm": "matroska", "mp4": "mov", "aac": "aac"}


def container_of(data: bytes) -> str | None:
    """The demuxer a file's first bytes call for, or None (libsndfile's formats)."""
    if data[:4] == b"\x1a\x45\xdf\xa3":  # EBML: WebM, Matroska
        return DEMUXERS["webm"]
    if data[4:8] == b"ftyp":  # ISO base media: MP4, M4A, MOV
        return DEMUXERS["mp4"]
    if len(data) > 1 and data[0] == 0xFF and (data[1] & 0xF6) == 0xF0:  # ADTS: 12 sync bits, layer 0
        return DEMUXERS["aac"]
    return None


def read_mono(data: bytes, demuxer: str, check_length: Callable[[int, int], None], unreadable: str) -> tuple[np.ndarray, int]:
    """The first audio stream as mono float32 at its own rate; `check_length(frames,
    rate)` is called as frames come, so a long file is refused before it is all held."""
    import av

    blocks, frames = [], 0
    try:
        with av.open(io.BytesIO(data), mode="r", format=demuxer) as container:
            stream = next((s for s in container.streams if s.type == "audio"), None)
            if stream is None:
                raise field_error("file", "The file holds no audio stream")
            codec = stream.codec_context.name
            if codec not in CODECS and not codec.startswith("pcm_"):
                raise field_error("file", f"The file's audio is {codec}, which is not read here; "
                                          f"send opus, vorbis, aac, mp3, flac, alac or PCM audio")
            rate = int(stream.codec_context.sample_rate or stream.rate or 0)
            check_length(0, rate)
            # Mono float at the stream's own rate; the caller resamples to the model's.
            mono = av.AudioResampler(format="flt", layout="mono", rate=rate)
            frames_in = container.decode(stream)
            while True:
                try:
                    frame = next(frames_in)
                except StopIteration:
                    break
                except av.FFmpegError:
                    # A file cut mid-frame (a recording stopped, an upload cut): what came
                    # before is heard, as libsndfile's formats and WebM are; nothing is unreadable.
                    if not blocks:
                        raise
                    break
                for out in mono.resample(frame):
                    block = out.to_ndarray().reshape(-1)
                    frames += block.shape[0]
                    check_length(frames, rate)
                    blocks.append(block)
            for out in mono.resample(None):
                blocks.append(out.to_ndarray().reshape(-1))
    except Exception as exc:
        # Our own refusals (a field error: too long, no audio) stand; FFmpeg's errors (some
        # of them ValueErrors) mean the bytes are not a file of that format.
        if getattr(exc, "param", None):
            raise
        raise field_error("file", unreadable) from exc
    return (np.concatenate(blocks).astype(np.float32) if blocks else np.zeros(0, dtype=np.float32)), rate


def write_aac(samples: np.ndarray, rate: int) -> bytes:
    """AAC in ADTS frames (what OpenAI's `aac` speech format is), mono; nothing for no samples."""
    import av

    if np.asarray(samples).size == 0:
        return b""  # the encoder fails on an empty frame
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="adts") as container:
        stream = container.add_stream("aac", rate=rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(np.asarray(samples, dtype=np.float32).reshape(1, -1), format="flt", layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()
