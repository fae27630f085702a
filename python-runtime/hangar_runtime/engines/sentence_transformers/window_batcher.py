"""Dynamic batching: calls that arrive within `window_s` of the first waiting
one, up to `max_batch_size` inputs, are encoded in one forward pass, and each
caller gets its own slice.

A call the control plane sent `alone` (no other call of its own was open on this
runtime) that finds nothing waiting opens no window: nobody is about to join it,
so waiting would only add the window to its latency. It is served at the next
step, together with whatever the work loop finds already queued in its inbox.
Calls sent while others are open (a crowd of clients) gather as above.

The window is kept without a thread and without spinning: wait_before_step()
tells the work loop how long the window has left, and the loop blocks on its
inbox for at most that long (a CALL arriving ends the wait and joins the
window; SHUTDOWN ends it too). step() always serves what is waiting: it is
called once the window is over or full, or directly by a caller that wants an
answer now.

Each call is checked when it is submitted (too long with truncate off, bad
token ids, bad kwargs), so a bad call fails alone and never reaches a batch.
Every input is encoded exactly as it would be alone: padding is masked out of
attention and pooling, so a result does not depend on its batch mates."""

import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ...errors import exception_text
from ..base import BatchScheduler, CallSink

log = logging.getLogger("hangar_runtime.sentence_transformers")


class Task(Protocol):
    """What the batcher serves: the Embedder or the Reranker."""

    method: str

    def prepare(self, args: list, kwargs: dict) -> Any:
        """A request with a `size` (its inputs); raises for input the model cannot take."""

    def run(self, requests: list) -> list:
        """One forward pass: each request's RESULT value, in order."""


@dataclass
class _Waiting:
    request: Any
    sink: CallSink
    since: float  # when it was submitted
    opens_no_window: bool  # sent alone, and nothing was waiting


class WindowBatcher(BatchScheduler):
    def __init__(self, task: Task, window_s: float, max_batch_size: int,
                 clock: Callable[[], float] = time.monotonic):
        self._task = task
        self._window_s = window_s
        self.max_batch_size = max_batch_size
        self._clock = clock
        self._waiting: deque[_Waiting] = deque()
        self.methods = frozenset({task.method})
        # For tests and the debug log: how many calls each forward pass served.
        self.passes: deque[int] = deque(maxlen=64)

    def submit(self, method: str, args: list, kwargs: dict, sink: CallSink) -> None:
        request = self._task.prepare(args, kwargs)  # raising here fails this call alone
        self._drop_closed()
        alone = sink.alone and not self._waiting
        self._waiting.append(_Waiting(request, sink, self._clock(), alone))

    def has_work(self) -> bool:
        self._drop_closed()
        return bool(self._waiting)

    def wait_before_step(self) -> float:
        self._drop_closed()
        if not self._waiting or self._waiting[0].opens_no_window or self._waiting_inputs() >= self.max_batch_size:
            return 0.0
        return max(0.0, self._waiting[0].since + self._window_s - self._clock())

    def step(self) -> None:
        self._drop_closed()
        batch = self._take()
        if not batch:
            return
        try:
            values = self._task.run([w.request for w in batch])
        except Exception as exc:
            if len(batch) == 1:
                batch[0].sink.fail(exc)
                return
            # Every call here passed its checks, so this is unexpected; serving each
            # alone keeps one call's trouble (or a batch too big for the device's
            # memory) from failing the others.
            log.warning("a batch of %d calls failed (%s); serving them one by one", len(batch), exception_text(exc))
            for waiting in batch:
                self._run_alone(waiting)
            return
        self.passes.append(len(batch))
        if log.isEnabledFor(logging.DEBUG):  # HANGAR_RUNTIME_LOG_LEVEL=DEBUG; the tests read it
            log.debug("one forward pass: %d calls, %d inputs", len(batch), sum(w.request.size for w in batch))
        for waiting, value in zip(batch, values):
            waiting.sink.finish(value)

    def _take(self) -> list[_Waiting]:
        """The oldest calls, in arrival order, up to max_batch_size inputs; always at
        least one (a call bigger than that is encoded alone, in chunks)."""
        batch, inputs = [], 0
        while self._waiting:
            size = self._waiting[0].request.size
            if batch and inputs + size > self.max_batch_size:
                break
            batch.append(self._waiting.popleft())
            inputs += size
        return batch

    def _run_alone(self, waiting: _Waiting) -> None:
        try:
            value = self._task.run([waiting.request])[0]
        except Exception as exc:
            waiting.sink.fail(exc)
            return
        self.passes.append(1)
        waiting.sink.finish(value)

    def _waiting_inputs(self) -> int:
        return sum(w.request.size for w in self._waiting)

    def _drop_closed(self) -> None:
        # An aborted call is answered (ERROR aborted) by its sink; it is not encoded.
        if any(w.sink.closed for w in self._waiting):
            self._waiting = deque(w for w in self._waiting if not w.sink.closed)
