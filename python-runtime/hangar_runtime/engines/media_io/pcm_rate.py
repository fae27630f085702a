"""OpenAI's `pcm` speech format is raw 16-bit little-endian mono at 24 kHz: clients
play it at that rate, since nothing in the bytes says another (OpenAI's SDK player
does). An engine's own rate (espeak-ng speaks at 22,050 Hz) played at 24 kHz was 9 %
fast and high, so pcm is converted to 24 kHz: whole (audio_codec.encode, polyphase)
or as a stream goes out (PcmRateStream, below)."""

import numpy as np

PCM_RATE = 24_000


class PcmRateStream:
    """16-bit PCM at `source_rate` in, 16-bit PCM at 24 kHz out, piece by piece as a
    stream arrives (a piece may end mid-sample). Linear interpolation between the
    input's samples, which for this small upward step (22,050 to 24,000) adds nothing
    a speech synthesiser's voice has; positions are exact fractions, so a long stream
    does not drift."""

    def __init__(self, source_rate: int, rate: int = PCM_RATE):
        self._source = int(source_rate)
        self._rate = int(rate)
        self._held = np.zeros(0, dtype=np.float64)  # input samples not passed yet
        self._phase = 0  # the next output's position in `_held`, in units of 1/rate samples
        self._odd = b""  # a byte of a sample cut between pieces

    def feed(self, data: bytes) -> bytes:
        data = self._odd + data
        whole = len(data) - len(data) % 2
        self._odd = data[whole:]
        if self._source == self._rate:
            return data[:whole]
        samples = np.frombuffer(data[:whole], dtype="<i2").astype(np.float64)
        held = np.concatenate([self._held, samples])
        if len(held) < 2:
            self._held = held
            return b""
        # Outputs whose two neighbours are both here: position p (in 1/rate units) lies
        # between samples p // rate and p // rate + 1.
        last = (len(held) - 1) * self._rate
        count = 0 if self._phase >= last else (last - 1 - self._phase) // self._source + 1
        phases = self._phase + self._source * np.arange(count, dtype=np.int64)
        index = phases // self._rate
        fraction = (phases % self._rate) / self._rate
        out = held[index] * (1 - fraction) + held[np.minimum(index + 1, len(held) - 1)] * fraction
        next_phase = self._phase + self._source * count
        keep = next_phase // self._rate
        self._held = held[keep:]
        self._phase = next_phase - keep * self._rate
        return np.clip(np.rint(out), -32768, 32767).astype("<i2").tobytes()
