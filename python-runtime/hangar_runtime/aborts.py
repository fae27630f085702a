"""The ids the control plane has aborted, shared by the I/O thread (which marks
them as ABORTs arrive) and the work loop (which checks and forgets them)."""

import threading
from collections import OrderedDict

# ABORT and CALL travel on different sockets, so an ABORT may overtake the CALL it
# names; the id is kept until the call is seen. ABORTs for ids that are already
# finished would pile up forever, so the oldest marks are dropped past this size.
_CAPACITY = 4096


class AbortRegistry:
    def __init__(self, capacity: int = _CAPACITY):
        self._capacity = capacity
        self._ids: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def abort(self, call_id) -> None:
        with self._lock:
            self._ids[call_id] = None
            self._ids.move_to_end(call_id)
            while len(self._ids) > self._capacity:
                self._ids.popitem(last=False)

    def is_aborted(self, call_id) -> bool:
        with self._lock:
            return call_id in self._ids

    def forget(self, call_id) -> None:
        with self._lock:
            self._ids.pop(call_id, None)
