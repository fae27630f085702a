"""Exit when the control plane is gone, whatever the work loop is doing.

os._exit from a daemon thread is the only exit a stuck engine (a C extension
holding the main thread in a long load, say) cannot block: no cleanup, no
waiting for other threads. Sockets and files die with the process anyway."""

import logging
import os
import threading
import time

from . import exit_codes
from .process_group import end_own_group

log = logging.getLogger("hangar_runtime.watchdog")

CHECK_INTERVAL_S = 0.5


class Heartbeat:
    """When the last PING arrived. Written by the I/O thread, read by the watchdog;
    a float assignment is atomic under the GIL, so no lock is needed."""

    def __init__(self):
        self._last: float | None = None  # None until HELLO: the clock starts there

    def beat(self) -> None:
        self._last = time.monotonic()

    def silent_for(self) -> float:
        last = self._last
        return 0.0 if last is None else time.monotonic() - last


class Watchdog(threading.Thread):
    def __init__(self, heartbeat: Heartbeat, timeout_s: float, parent_pid: int):
        super().__init__(name="hangar-watchdog", daemon=True)
        self._heartbeat = heartbeat
        self._timeout_s = timeout_s
        self._parent_pid = parent_pid  # 0: no parent check (cluster mode)

    def run(self) -> None:
        while True:
            reason = self._reason_to_exit()
            if reason:
                log.error("control plane gone (%s); exiting", reason)
                end_own_group()  # nobody else is left to end what the engine started
                os._exit(exit_codes.CONTROL_PLANE_GONE)
            time.sleep(CHECK_INTERVAL_S)

    def _reason_to_exit(self) -> str | None:
        if self._parent_pid:
            parent = os.getppid()
            if parent != self._parent_pid:
                # We were re-parented: the control plane that spawned us has died.
                return f"parent pid is {parent}, expected {self._parent_pid}"
        silent = self._heartbeat.silent_for()
        if silent >= self._timeout_s:
            return f"no PING for {silent:.1f}s (timeout {self._timeout_s:g}s)"
        return None
