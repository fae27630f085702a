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

_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


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
    """Current resident set size; the peak where /proc is not there (macOS)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
