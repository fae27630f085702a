"""A user launcher for the `python` engine tests: infer(model, what, ...) runs
the behaviour named by `what`, so one loaded runtime can exercise many cases."""

import builtins
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


BEHAVIOURS = {
    "count": _count,
    "echo": lambda model, value: value,
    "numpy": _numpy,
    "raise": _raise,
    "object": lambda model: object(),
    "set_chunks": lambda model: iter([1, {2}, 3]),
    "sleep": _sleep,
    "exit": _exit,
}


def infer(model, what, *args, **kwargs):
    return BEHAVIOURS[what](model, *args, **kwargs)
