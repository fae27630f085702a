"""The small interface every engine implements; the work loop knows nothing else
about engines. Engines return raw results (numpy arrays and all): the work loop
turns them into plain values, so each engine need not."""

from abc import ABC, abstractmethod
from typing import Any, Callable, Protocol


class Progress(Protocol):
    """Reports load progress to the control plane as PROGRESS. Call it only from the
    thread that runs load(): it writes to the work loop's socket."""

    def __call__(self, fraction: float, stage: str, message: str = "") -> None: ...


class Engine(ABC):
    # The name a LOAD's `engine` field uses to pick this class.
    name: str = ""
    # Whether the engine's own work keeps CPU cores busy. Such an engine computes at a
    # lower priority than the threads that relay its answers (compute_priority.py);
    # one that only paces or waits (the simulator) keeps the runtime's priority, so
    # its timing does not wait behind the control plane.
    cpu_bound: bool = True
    # Sent in READY. Flexible models (the sklearn and python engines) have none,
    # as in Xinference: what they can do is only the method they expose.
    abilities: tuple[str, ...] = ()

    @abstractmethod
    def load(self, spec: dict, progress: Progress) -> None:
        """Load the model named by the LOAD spec. Raise errors.InvalidModel when the
        model itself is bad; any other exception is reported as "internal"."""

    def describe(self) -> dict:
        """Keys added to the model's description (sent in READY)."""
        return {}

    @abstractmethod
    def methods(self) -> dict[str, Callable[..., Any]]:
        """Method name -> callable, called as fn(*args, **kwargs) from a CALL. A
        streaming method returns an iterator; each item becomes a CHUNK."""

    def close(self) -> None:
        """The runtime is stopping: release what load() started (an engine's own
        processes, GPU memory). Called once, from the work loop's thread."""

    def scheduler(self) -> "BatchScheduler | None":
        """An engine that serves many calls at once returns its scheduler; the work
        loop then hands it every call to one of scheduler.methods instead of calling
        the method itself. None (the default): calls run one at a time."""
        return None


class CallSink(Protocol):
    """Where a batched call's answer goes. Use it only from the work loop's thread
    (it writes to the work loop's socket), that is from submit() and step()."""

    call_id: int
    stream: bool
    # The control plane had no other call open on this runtime when it sent this
    # one (CALL's `alone`): nobody is about to join it in a batch.
    alone: bool

    @property
    def closed(self) -> bool:
        """True once the call is answered, failed or aborted: its scheduler drops it."""

    def chunk(self, value) -> None:
        """A stream call's next CHUNK. An ABORT that has arrived turns it into ERROR aborted."""

    def finish(self, value=None) -> None:
        """Done. A stream call sends `value` as a last CHUNK (unless None), then END;
        a non-stream call sends `value` as its RESULT."""

    def fail(self, exc: BaseException, kind: str | None = None) -> None:
        """ERROR with the exception's text; `kind` defaults to the doc's mapping."""


class BatchScheduler(ABC):
    """Continuous batching: the work loop submits calls as they arrive and, while
    has_work(), calls step() between checks of its inbox, so calls that arrive
    while others run join them at the next step. A step should be short (one
    decoding step, say): the inbox waits while it runs."""

    # The method names this scheduler serves.
    methods: frozenset[str] = frozenset()

    @abstractmethod
    def submit(self, method: str, args: list, kwargs: dict, sink: CallSink) -> None:
        """Queue a call. Raise for bad input (ValueError, TypeError, KeyError mean
        ERROR invalid): the work loop answers the call with the exception."""

    def set_wake(self, wake: Callable[[], None]) -> None:
        """`wake()`, callable from any thread, ends the work loop's wait on its inbox at
        once. A scheduler whose results are produced on another thread (vLLM's event
        loop) calls it when one arrives, so step() runs then, not when the timeout of
        wait_before_step() runs out. The default: a scheduler that needs no wake-up."""

    @abstractmethod
    def has_work(self) -> bool:
        """True while any call is queued or running (step() should be called)."""

    def wait_before_step(self) -> float:
        """Seconds the work loop may wait for more calls before step() is due; 0 (the
        default): step now. A scheduler that gathers calls into a window returns
        the time left in it: the loop then blocks on its inbox for at most that
        long, so it neither spins nor delays a CALL or SHUTDOWN that arrives."""
        return 0.0

    @abstractmethod
    def step(self) -> None:
        """Admit queued calls, advance every running one, answer the finished ones
        through their sinks, and drop the calls whose sink is closed."""
