"""The work loop (and every thread it starts: torch's and OpenMP's worker pools, an
engine's own processes) runs at a lower CPU priority than the threads that relay
messages: the I/O thread, zmq's background thread and the watchdog, all started
before this is applied, and the control plane.

Why: an engine computing on the CPU keeps every core busy (torch sizes its pool to
the cores, and OpenMP workers spin after each parallel region). A token the work
loop has just handed over then waits, runnable, until the scheduler lets the I/O
thread, zmq's thread and the control plane run: milliseconds on a small machine,
added to every token and to the time to first token. At a lower priority the
compute yields to them; when nothing else wants the CPU it gets all of it, so the
engine loses nothing (docs/performance.md, "Time to first token").

Two levers, both per thread:
- the scheduling policy, SCHED_IDLE by default without GPUs: a thread under it is
  preempted the moment any normal thread of the same group wakes. A nice value alone
  is not enough on Linux 6.6 and later (EEVDF): a woken thread still waits out the
  running one's slice, about a decode step of a small model, and that wait landed on
  every relayed token (measured on the 2-core VM: the runtime → control plane hop
  took 1.5 ms at the median and 3 ms at p90 with nice 10, 0.33 ms with SCHED_IDLE);
- the nice value (HANGAR_RUNTIME_COMPUTE_NICE), which orders the work loop below the
  relay where the policy is left normal.
Both compare threads of one scheduling group only; the control plane therefore
starts a runtime without GPUs in the control plane's own session, not a new one (a
new session is a new autogroup on Linux, whose threads compete with the control
plane's as one group).

It is applied when a LOAD names an engine whose work is on the CPU (Engine.cpu_bound;
not the simulator, whose steps are timers standing in for a GPU's). A runtime given
GPUs (CUDA_VISIBLE_DEVICES names some) keeps its priority by default: its engine's
CPU threads feed the device (vLLM's scheduler loop, kernel launches), and a host
with GPUs has cores to spare for the relay.

Lowering one's own priority needs no privilege. Linux keeps the policy and the nice
value per thread, and a thread starts with its creator's, hence
`threading.get_native_id()` and the call before the engine's pools exist."""

import logging
import os
import threading

log = logging.getLogger("hangar_runtime")

NICE_ENV = "HANGAR_RUNTIME_COMPUTE_NICE"
POLICY_ENV = "HANGAR_RUNTIME_COMPUTE_POLICY"
DEFAULT_NICE = 10
POLICIES = ("idle", "normal")


def lower_compute_priority() -> tuple[int, str]:
    """Lower the calling thread's priority: raise its nice value by
    HANGAR_RUNTIME_COMPUTE_NICE (default 10 without GPUs, 0 with; 0 leaves it) and
    set its policy by HANGAR_RUNTIME_COMPUTE_POLICY (`idle`: SCHED_IDLE, the default
    without GPUs; `normal`: left as it is, the default with). Returns what was
    applied: the nice increment and the policy."""
    gpus = bool(os.environ.get("CUDA_VISIBLE_DEVICES", "").strip())
    tid = threading.get_native_id()
    increment = _raise_nice(tid, _nice_increment(0 if gpus else DEFAULT_NICE))
    policy = _policy("normal" if gpus else "idle")
    if policy == "idle" and not _use_idle_policy(tid):
        policy = "normal"
    return increment, policy


def _nice_increment(default: int) -> int:
    raw = os.environ.get(NICE_ENV, "").strip()
    try:
        increment = default if raw == "" else int(raw)
    except ValueError:
        log.warning("%s=%r is not an integer; using %d", NICE_ENV, raw, default)
        increment = default
    return max(0, min(19, increment))


def _policy(default: str) -> str:
    raw = os.environ.get(POLICY_ENV, "").strip().lower()
    if raw == "":
        return default
    if raw not in POLICIES:
        log.warning("%s=%r is not one of %s; using %s", POLICY_ENV, raw, ", ".join(POLICIES), default)
        return default
    return raw


def _raise_nice(tid: int, increment: int) -> int:
    if increment == 0:
        return 0
    try:
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + increment))
    except OSError as exc:  # not Linux-like, or a sandbox that forbids it: run as is
        log.info("could not lower the work loop's CPU priority: %s", exc)
        return 0
    return increment


def _use_idle_policy(tid: int) -> bool:
    setter = getattr(os, "sched_setscheduler", None)
    idle = getattr(os, "SCHED_IDLE", None)
    if setter is None or idle is None:  # not Linux: the nice value alone
        log.info("SCHED_IDLE is not available here; the work loop keeps its policy")
        return False
    try:
        # On Linux the pid argument names a thread; the priority must be 0 for SCHED_IDLE.
        setter(tid, idle, os.sched_param(0))
    except OSError as exc:
        log.info("could not move the work loop to SCHED_IDLE: %s", exc)
        return False
    return True
