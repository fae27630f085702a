"""Whether the one-at-a-time call the work loop runs now has been aborted, for an
engine whose call takes long in one piece (a transcription of an hour of audio) to
stop between its pieces. The control plane aborts a call whose client went away
(contract §4); without this such a call ran to its end, holding the model, since
the work loop looks at aborts only before a call and between a stream's items."""

import threading
from contextlib import contextmanager
from collections.abc import Callable


class CallAborted(Exception):
    """Raised by `stop_if_aborted`: the work loop answers ERROR aborted."""


_running = threading.local()


@contextmanager
def running_call(is_aborted: Callable[[], bool]):
    """Within this, `stop_if_aborted` asks `is_aborted` (the work loop's call)."""
    _running.check = is_aborted
    try:
        yield
    finally:
        _running.check = None


def stop_if_aborted() -> None:
    """Raises CallAborted if the running call was aborted; nothing outside a call."""
    check = getattr(_running, "check", None)
    if check is not None and check():
        raise CallAborted("Call aborted")
