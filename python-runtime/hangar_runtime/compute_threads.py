"""How many threads a runtime without GPUs computes with (docs/runtime-protocol.md,
"CPU threads"): by default, the cores this process may use, shared among the
model's replicas (the LOAD's `replicas`), which the control plane starts side by
side on the same cores.

Why: torch (and every OpenMP library) sizes its pool to all the cores it can see,
and OpenMP workers spin at the end of each parallel region waiting for the others.
When another pool wants the same cores, a worker is preempted and the rest spin for
it: measured on the 2-core VM, two replicas of a small Llama side by side, each with
torch's default pool of two threads, did 190 tokens/s each, against 460 each with
one thread apiece (docs/performance.md, "CPU threads"). Pools that together fit the
cores do not collapse that way. (One core is not kept back for the relay: with one
replica that cost a lone stream a tenth of its rate on 2 cores, while the control
plane's light, intermittent load does not make the pool collapse.)

An operator's OMP_NUM_THREADS (the service's environment or the launch `envs`)
always wins, and HANGAR_RUNTIME_CPU_THREADS sets the count (0: leave the libraries'
own default, every core). A runtime given GPUs is left alone: its CPU threads feed
the device."""

import logging
import os
import sys
from collections.abc import Mapping

log = logging.getLogger("hangar_runtime")

THREADS_ENV = "HANGAR_RUNTIME_CPU_THREADS"
_OMP_ENV = "OMP_NUM_THREADS"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def cpu_threads_for(spec: dict, env: Mapping[str, str], cores: int) -> int | None:
    """The thread count for this replica, or None to leave the libraries' default."""
    if env.get("CUDA_VISIBLE_DEVICES", "").strip() or env.get(_OMP_ENV, "").strip():
        return None
    raw = env.get(THREADS_ENV, "").strip()
    if raw:
        try:
            wanted = int(raw)
        except ValueError:
            wanted = -1
        if wanted == 0:
            return None
        if wanted > 0:
            return wanted
        log.warning("%s=%r is not a count of threads; using the default", THREADS_ENV, raw)
    replicas = spec.get("replicas")
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        replicas = 1
    return max(1, cores // replicas)


def apply_cpu_threads(spec: dict) -> int | None:
    """Sizes the compute pools before the engine loads: libraries imported later read
    OMP_NUM_THREADS; torch, when a warm spare has already imported it, is told
    directly. Returns the count applied, or None."""
    threads = cpu_threads_for(spec, os.environ, usable_cores())
    if threads is None:
        return None
    os.environ[_OMP_ENV] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    log.info("computing with %d CPU thread(s)", threads)
    return threads
