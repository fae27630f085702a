"""A user launcher for the `python` engine tests: infer(model, what, ...) runs
the behaviour named by `what`, so one loaded runtime can exercise many cases."""

import builtins
import os
import sys
import time

import numpy as np


def load(scale=1, fail=None, sleep=0.0):
    if sleep:
        time.sleep(sleep)
    if fail:
        raise RuntimeError(fail)
    print("toy launcher loaded")  # a user's print: must not reach stdout
    return {"scale": scale}


def _count(model, n, delay=0.0, fail_at=None):
    for i in range(n):
        if delay:
            time.sleep(delay)
        if i == fail_at:
            raise ValueError(f"bad item {i}")
        yield i * model["scale"]


def _numpy(model):
    return {"array": np.arange(3) * model["scale"], "scalar": np.float64(0.25),
            "pair": (1, "a"), 7: np.array([[True, False]])}


def _raise(model, name, text=""):
    raise getattr(builtins, name)(text) if text else getattr(builtins, name)()


def _exit(model):
    raise SystemExit("user code called exit")


def _sleep(model, seconds):
    time.sleep(seconds)
    return "slept"


def _steps(model, n, delay):
    """Long work in steps, stopping between them once its call is aborted."""
    from hangar_runtime.call_abort import stop_if_aborted

    for _ in range(n):
        stop_if_aborted()
        time.sleep(delay)
    return "done"


def _threads(model):
    """What the runtime sized its compute pools to: the environment a library reads at
    import, and torch's own pool when torch is loaded."""
    torch = sys.modules.get("torch")
    return {"omp": os.environ.get("OMP_NUM_THREADS"), "torch": torch.get_num_threads() if torch else None}


BEHAVIOURS = {
    "count": _count,
    "echo": lambda model, value: value,
    "steps": _steps,
    "numpy": _numpy,
    "raise": _raise,
    "object": lambda model: object(),
    "set_chunks": lambda model: iter([1, {2}, 3]),
    "sleep": _sleep,
    "exit": _exit,
    "threads": _threads,
}


def infer(model, what, *args, **kwargs):
    return BEHAVIOURS[what](model, *args, **kwargs)
