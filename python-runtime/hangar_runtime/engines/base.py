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
