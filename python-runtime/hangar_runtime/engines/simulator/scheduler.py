"""The simulator's continuous batching: one engine step every `step_ms`, each giving
one token to every running request (up to `max_batch`; the rest wait in arrival
order), a request's first token at the first step at least `ttft_ms` after it
arrived. Steps keep their cadence (a late step does not push the next ones back)
unless the runtime falls a whole step behind, as a GPU that is over-full would."""

import time

from ..base import BatchScheduler, CallSink
from .options import SimulatorOptions
from .request import SimRequest

METHODS = frozenset({"chat", "generate"})


class SimulatorScheduler(BatchScheduler):
    methods = METHODS

    def __init__(self, options: SimulatorOptions, build_request, clock=time.monotonic):
        """build_request(method, args, kwargs, sink, first_step_at) -> SimRequest; raises for bad input."""
        self._step_s = options.step_ms / 1000.0
        self._ttft_s = options.ttft_ms / 1000.0
        self._max_batch = options.max_batch
        self._build = build_request
        self._clock = clock
        self._waiting: list[SimRequest] = []
        self._running: list[SimRequest] = []
        self._next_step_at: float | None = None  # None: idle, the next step is due at once
        self.steps = 0

    def submit(self, method: str, args: list, kwargs: dict, sink: CallSink) -> None:
        self._waiting.append(self._build(method, args, kwargs, sink, self._clock() + self._ttft_s))

    def has_work(self) -> bool:
        return bool(self._waiting or self._running)

    def wait_before_step(self) -> float:
        if self._next_step_at is None:
            return 0.0
        return max(0.0, self._next_step_at - self._clock())

    def step(self) -> None:
        now = self._clock()
        if self._next_step_at is not None and now < self._next_step_at:
            return  # woken early (a message arrived): not due yet
        self._running = [r for r in self._running if not r.done]
        self._waiting = [r for r in self._waiting if not r.done]
        room = self._max_batch - len(self._running)
        if room > 0 and self._waiting:
            self._running += self._waiting[:room]
            self._waiting = self._waiting[room:]
        for request in self._running:
            if request.first_step_at <= now and not request.done:
                request.advance()
        self._running = [r for r in self._running if not r.done]
        self.steps += 1
        if not self.has_work():
            self._next_step_at = None
            return
        due = (self._next_step_at if self._next_step_at is not None else now) + self._step_s
        self._next_step_at = due if due > now else now + self._step_s
