"""The result every speech-to-text engine returns (docs/runtime-protocol.md): the
text, and segments with timings, from which the control plane renders json, text,
srt, vtt and verbose_json."""


class Transcript:
    def __init__(self, language: str | None, duration: float):
        self.language = language
        self.duration = float(duration)
        self.segments: list[dict] = []
        self.words: list[dict] = []

    def add_segment(self, text: str, start: float, end: float, words: list[dict] | None = None) -> None:
        self.segments.append({"id": len(self.segments), "start": round(float(start), 3),
                              "end": round(float(end), 3), "text": text})
        for word in words or []:
            self.words.append({"word": word["word"], "start": round(float(word["start"]), 3),
                               "end": round(float(word["end"]), 3)})

    def as_dict(self) -> dict:
        return {"text": " ".join(s["text"].strip() for s in self.segments if s["text"].strip()),
                "language": self.language, "duration": round(self.duration, 3),
                "segments": self.segments, "words": self.words}
