"""A chat template rendered under limits of CPU time and memory.

Jinja's sandbox caps `range` at 100,000 items, and nothing else: a loop nested in a
loop of that range runs for hours, and a loop that doubles a string
(`{% set ns.s = ns.s ~ ns.s %}`) fills the machine's memory in some thirty turns.
The render runs on the work loop, so either would stall every request of the model
(the I/O thread still answers PINGs, so nothing restarts it). A template is code
from a registration (`models:register`) or a model's own files; a hostile one should
cost its request, never the replica. The llama.cpp engine bounds its renders too
(src/llama-runtime/engine/bounded-template.ts).

While a render runs, a timer (SIGALRM every 10 ms) looks at it, and its handler
raises in the render when it is past a limit. Python runs signal handlers in the main
thread between two bytecodes, so the check comes at the latest right after the
operation in flight, and a render that stays inside the limits costs four system
calls (6 µs): tracing each template line measured 3-7 times the render's time, and a
watchdog thread could not get the GIL between two large copies (a doubling string
reached 6 GiB before it was stopped).
- CPU: 5 s of the main thread's CPU time. The built-in families' templates render
  1,000 messages in 10-130 ms.
- Memory: the process's resident size may grow by 256 MiB during a render, far more
  than a prompt any context window holds.
The work loop is the main thread (work_loop.py), where both LLM engines render; a
render on another thread runs without these limits, since only the main thread can
take a signal's handler. None does: the Transformers engine tokenizes a call of more
than 64 Ki characters on a thread of its own, but renders its template on the work
loop first (batcher.py; until 2026-11-29 it rendered there too, without limits, and a
nested loop held that thread, and every long call after it, for hours).

One operation is never interrupted: template_sandbox.py refuses, before they run, the
common ones that build a value of a size the template chooses.
"""

import os
import signal
import threading
import time

MAX_CPU_SECONDS = 5.0
MAX_GROWTH_BYTES = 256 << 20
_TICK_SECONDS = 0.01
_PAGE = os.sysconf("SC_PAGE_SIZE")


class TemplateLimitExceeded(ValueError):
    """Raised in a render that went past a limit: the request's fault, said as such."""

    def __init__(self, reason: str):
        super().__init__(f"The chat template could not render the messages: {reason}")


def _resident_bytes() -> int:
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[1]) * _PAGE


class _Render:
    def __init__(self):
        self.cpu_start = time.thread_time()
        self.resident_start = _resident_bytes()

    def over_limit(self) -> str | None:
        if time.thread_time() - self.cpu_start > MAX_CPU_SECONDS:
            return f"the template ran for more than {MAX_CPU_SECONDS:g} s of CPU"
        if _resident_bytes() - self.resident_start > MAX_GROWTH_BYTES:
            return f"the template took more than {MAX_GROWTH_BYTES >> 20} MiB of memory"
        return None


_current: _Render | None = None


def _on_tick(signum, frame):
    render = _current
    if render is not None:
        reason = render.over_limit()
        if reason is not None:
            raise TemplateLimitExceeded(reason)


class BoundedRender:
    """The block is stopped with TemplateLimitExceeded once it goes past a limit."""

    def __enter__(self):
        global _current
        self._armed = threading.current_thread() is threading.main_thread() and _current is None
        if self._armed:
            # The handler only for the render, and whatever was there before back after
            # it (transformers sets its own for a question it asks while loading).
            self._previous = signal.signal(signal.SIGALRM, _on_tick)
            _current = _Render()
            signal.setitimer(signal.ITIMER_REAL, _TICK_SECONDS, _TICK_SECONDS)
        return self

    def __exit__(self, kind, exc, tb):
        global _current
        if self._armed:
            # No render first: a tick that comes now finds nothing to stop.
            _current = None
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
        if kind is TemplateLimitExceeded:
            # The render's frames hold what it built (the string it doubled): let it go now.
            _clear_frames(tb)
        return False


def _clear_frames(tb) -> None:
    while tb is not None:
        try:
            tb.tb_frame.clear()
        except RuntimeError:  # a frame still running (ours)
            pass
        tb = tb.tb_next
