"""What the runtime reports about itself in every PONG (docs/runtime-protocol.md,
"Stats"): calls it holds, the size of its batches, its memory. The control plane
turns these into Prometheus metrics, so the runtime needs no HTTP endpoint of its
own and a cluster runtime reports the same way as a local one.

Each counter has a single writer thread (the I/O thread counts CALLs in, the work
loop counts answers and batch steps), so plain int updates under the GIL are safe;
the I/O thread only reads the work loop's counters."""

import os
import resource
import sys


class RuntimeStats:
    def __init__(self):
        self.calls_received = 0  # written by the I/O thread
        self.calls_answered = 0  # written by the work loop (RESULT, END or ERROR sent)
        self.batch_steps = 0  # steps of a batching scheduler
        self.batch_step_calls = 0  # sum over those steps of the calls in the batch
        self.last_batch_size = 0

    def call_received(self) -> None:
        self.calls_received += 1

    def call_answered(self) -> None:
        self.calls_answered += 1

    def batch_step(self, calls: int) -> None:
        self.batch_steps += 1
        self.batch_step_calls += calls
        self.last_batch_size = calls

    def snapshot(self) -> dict:
        return {
            "queue_depth": max(0, self.calls_received - self.calls_answered),
            "batch_size": self.last_batch_size,
            "batch_steps": self.batch_steps,
            "batch_step_calls": self.batch_step_calls,
            "rss_bytes": resident_bytes(),
        }


def resident_bytes() -> int:
    """The replica's resident memory: this process and every process below it.

    An engine may run processes of its own (vLLM's engine core, a compile worker), whose
    memory the replica holds too; the memory budget counts what this reports. Where
    /proc is not there (macOS), this process's peak."""
    try:
        total = _vm_rss(os.getpid())
    except (OSError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
    seen = {os.getpid()}
    queue = _children(os.getpid())
    # Bounded: each pid is read once, and a process tree is finite.
    while queue:
        pid = queue.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            total += _vm_rss(pid)
        except (OSError, ValueError):
            continue  # it exited between the listing and the read
        queue.extend(_children(pid))
    return total


def _vm_rss(pid: int) -> int:
    # VmRSS is in kB whatever the page size.
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0  # a zombie has no VmRSS line


def _children(pid: int) -> list:
    """Children of every thread of a process (a child belongs to the thread that forked it)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                found.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return found
