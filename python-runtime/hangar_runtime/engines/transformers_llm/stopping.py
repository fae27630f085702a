"""Stop strings: generation ends where one appears, and the text returned never
contains it. Text arrives in pieces (a token at a time), so a piece ending with
what could be the start of a stop string is held back until the next piece says
whether it is one."""

from .holdback import split_held


class StopScanner:
    def __init__(self, stops: list[str]):
        # An empty stop string would match everywhere; it stops nothing instead.
        self._stops = [s for s in dict.fromkeys(stops) if s]
        self._held = ""
        self.stopped = False
        # The stop string that ended the text (the first to appear; of two at one
        # place, the first given): Anthropic's `stop_sequence`.
        self.matched: str | None = None

    def feed(self, text: str) -> str:
        """The part of the text so far that is safe to hand out. After a stop
        string is seen, `stopped` is set and the text before it is the last."""
        if self.stopped:
            return ""
        text = self._held + text
        found = [(i, s) for s in self._stops if (i := text.find(s)) >= 0]
        cut = min(found, key=lambda f: f[0])[0] if found else -1
        if cut >= 0:
            self.matched = next(s for i, s in found if i == cut)
            self.stopped = True
            self._held = ""
            return text[:cut]
        safe, self._held = split_held(text, self._stops)
        return safe

    def flush(self) -> str:
        """What was held back, once generation ended for another reason."""
        held, self._held = self._held, ""
        return held
