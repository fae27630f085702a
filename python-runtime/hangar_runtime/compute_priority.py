"""The work loop (and every thread it starts: torch's and OpenMP's worker pools, an
engine's own processes) runs at a lower CPU priority than the threads that relay
messages: the I/O thread, zmq's background thread and the watchdog, all started
before this is applied, and the control plane.

Why: an engine computing on the CPU keeps every core busy (torch sizes its pool to
the cores, and OpenMP workers spin after each parallel region). A token the work
loop has just handed over then waits, runnable, until the scheduler lets the I/O
thread, zmq's thread and the control plane run: milliseconds on a small machine,
added to every token and to the time to first token. At a lower priority the
compute yields to them at once; when nothing else wants the CPU it gets all of it,
so the engine loses nothing (docs/performance.md, "Time to first token").

A runtime given GPUs (CUDA_VISIBLE_DEVICES names some) keeps its priority by
default: its engine's CPU threads feed the device (vLLM's scheduler loop, kernel
launches), and a host with GPUs has cores to spare for the relay.

Lowering one's own priority needs no privilege. Linux keeps nice values per
thread, and a thread starts with its creator's, hence `threading.get_native_id()`
and the call before the engine's pools exist."""

import logging
import os
import threading

log = logging.getLogger("hangar_runtime")

NICE_ENV = "HANGAR_RUNTIME_COMPUTE_NICE"
DEFAULT_NICE = 10


def lower_compute_priority() -> int:
    """Raise the calling thread's nice value by HANGAR_RUNTIME_COMPUTE_NICE (default
    10 for a runtime without GPUs, 0 for one with; 0 turns it off). Returns the
    increment applied."""
    default = 0 if os.environ.get("CUDA_VISIBLE_DEVICES", "").strip() else DEFAULT_NICE
    raw = os.environ.get(NICE_ENV, "").strip()
    try:
        increment = default if raw == "" else int(raw)
    except ValueError:
        log.warning("%s=%r is not an integer; using %d", NICE_ENV, raw, default)
        increment = default
    increment = max(0, min(19, increment))
    if increment == 0:
        return 0
    tid = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + increment))
    except OSError as exc:  # not Linux-like, or a sandbox that forbids it: run as is
        log.info("could not lower the work loop's CPU priority: %s", exc)
        return 0
    return increment
