"""The PONG's rss_bytes is the replica's memory: the runtime and the processes it started
(docs/runtime-protocol.md, "Stats")."""

import os
import subprocess
import sys

from hangar_runtime.runtime_stats import _vm_rss, resident_bytes

MIB = 1024 * 1024

# Holds 96 MiB, touched so that it is resident, and says so on stdout.
HOLDER = "b = bytearray(96 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('ready', flush=True)\nimport sys; sys.stdin.read()"


def test_counts_the_processes_it_started_and_forgets_them_when_they_end():
    alone = resident_bytes()
    child = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline().strip() == b"ready"
        held = _vm_rss(child.pid)
        assert held > 90 * MIB
        with_child = resident_bytes()
        # This process's own RSS is read a moment later than in resident_bytes(), and a
        # pytest process that imported torch may map a page or two meanwhile (seen: 4 kB
        # short of `held`): allow 1 MiB, far below the child's 96 MiB.
        assert with_child - _vm_rss(os.getpid()) >= held - MIB
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    # Once the child has ended (and been reaped), only this process counts again.
    assert resident_bytes() < alone + 64 * MIB
