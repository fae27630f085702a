"""Stop strings: generation ends where one appears, and the text returned never
contains it. Text arrives in pieces (a token at a time), so a piece ending with
what could be the start of a stop string is held back until the next piece says
whether it is one."""


class StopScanner:
    def __init__(self, stops: list[str]):
        # An empty stop string would match everywhere; it stops nothing instead.
        self._stops = [s for s in dict.fromkeys(stops) if s]
        self._held = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        """The part of the text so far that is safe to hand out. After a stop
        string is seen, `stopped` is set and the text before it is the last."""
        if self.stopped:
            return ""
        text = self._held + text
        cut = min((i for i in (text.find(s) for s in self._stops) if i >= 0), default=-1)
        if cut >= 0:
            self.stopped = True
            self._held = ""
            return text[:cut]
        keep = self._partial_stop_suffix(text)
        self._held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep]

    def flush(self) -> str:
        """What was held back, once generation ended for another reason."""
        held, self._held = self._held, ""
        return held

    def _partial_stop_suffix(self, text: str) -> int:
        """Length of the longest end of `text` that is the start of a stop string.
        Holding exactly that much is enough: a stop string that begins earlier
        would already be whole in `text` and found by the search above."""
        longest = 0
        for stop in self._stops:
            for n in range(min(len(stop) - 1, len(text)), longest, -1):
                if text.endswith(stop[:n]):
                    longest = n
                    break
        return longest
