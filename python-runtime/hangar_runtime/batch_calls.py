"""Calls served by a batching engine's scheduler (engines.base.BatchScheduler):
many at once, each answered through its own sink as it finishes.

Everything here runs on the work loop's thread, like the one-at-a-time path: the
scheduler's step() is called between checks of the inbox, never from another
thread, so sinks may write to the Outbox directly."""

import logging

from .aborts import AbortRegistry
from .engines.base import BatchScheduler
from .replies import Replies

log = logging.getLogger("hangar_runtime.work")


class BatchedCalls:
    def __init__(self, scheduler: BatchScheduler, replies: Replies, aborts: AbortRegistry):
        self._scheduler = scheduler
        self._replies = replies
        self._aborts = aborts
        self._open: dict[int, _Sink] = {}  # call id -> sink, until answered
        self.methods = frozenset(scheduler.methods)

    def busy(self) -> bool:
        return self._scheduler.has_work()

    def wait_before_step(self) -> float:
        return self._scheduler.wait_before_step()

    def submit(self, call_id: int, method: str, args: list, kwargs: dict, stream: bool, alone: bool = False) -> None:
        sink = _Sink(call_id, stream, alone, self._replies, self._aborts)
        try:
            self._scheduler.submit(method, args, kwargs, sink)
        except Exception as exc:
            sink.fail(exc)
        self._track(sink)

    def step(self) -> None:
        # ABORTs are looked at once per step, so a call that sends nothing for a
        # while (a non-stream call, a stream holding back text) still stops at the
        # next step; a stream's sink also checks before every CHUNK.
        for sink in list(self._open.values()):
            if self._aborts.is_aborted(sink.call_id):
                sink.abort()
        # The calls the scheduler holds at this step: the batch size it reports.
        self._replies.stats.batch_step(len(self._open))
        try:
            # A step's answers (one token for each running call, say) leave as one frame.
            with self._replies.collect():
                self._scheduler.step()
        except Exception as exc:
            # A scheduler should contain its own failures; if one escapes, every
            # call it held is in an unknown state, so each gets the error rather
            # than waiting forever. The scheduler drops them at its next step.
            log.error("batch step failed", exc_info=True)
            for sink in self._open.values():
                sink.fail(exc, kind="internal")
        for call_id in [i for i, sink in self._open.items() if sink.closed]:
            self._forget(call_id)

    def _track(self, sink: "_Sink") -> None:
        if sink.closed:
            self._aborts.forget(sink.call_id)
        else:
            self._open[sink.call_id] = sink

    def _forget(self, call_id: int) -> None:
        del self._open[call_id]
        self._aborts.forget(call_id)


class _Sink:
    """engines.base.CallSink over Replies: each call ends with exactly one RESULT,
    END or ERROR, and nothing is sent after it."""

    def __init__(self, call_id: int, stream: bool, alone: bool, replies: Replies, aborts: AbortRegistry):
        self.call_id = call_id
        self.stream = stream
        self.alone = alone
        self._replies = replies
        self._aborts = aborts
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def chunk(self, value) -> None:
        if self._closed:
            return
        if not self.stream:
            raise RuntimeError("chunk() on a non-stream call")
        if self._aborts.is_aborted(self.call_id):
            return self.abort()
        if not self._replies.chunk(self.call_id, value):
            self._closed = True

    def finish(self, value=None) -> None:
        if self._closed:
            return
        if self.stream:
            if value is not None:
                self.chunk(value)
                if self._closed:
                    return
            self._replies.end(self.call_id)
        else:
            self._replies.result(self.call_id, value)
        self._closed = True

    def fail(self, exc: BaseException, kind: str | None = None) -> None:
        if self._closed:
            return
        self._replies.fail(self.call_id, exc, kind)
        self._closed = True

    def abort(self) -> None:
        if self._closed:
            return
        # Unlike a one-at-a-time non-stream call, which runs to its end, a batched
        # one is cut at the next step: its sequence frees a slot for others.
        self._replies.error(self.call_id, "aborted", "Call aborted")
        self._closed = True
        log.info("call %s aborted", self.call_id)
