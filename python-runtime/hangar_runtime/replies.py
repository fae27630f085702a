"""How a call's answer goes out: RESULT, CHUNK, END and ERROR frames through the
Outbox. Shared by the one-at-a-time path (work_loop) and the batched one
(batch_calls), so both encode values and name failures the same way."""

import logging

from . import protocol
from .errors import call_error_kind, exception_text
from .outbox import Outbox
from .plain_values import NotPlainValue, to_plain
from .runtime_stats import RuntimeStats

log = logging.getLogger("hangar_runtime.work")


class Replies:
    def __init__(self, outbox: Outbox, stats: RuntimeStats | None = None):
        self._outbox = outbox
        # Counts every call's last message, for the queue depth the runtime reports.
        self.stats = stats if stats is not None else RuntimeStats()

    def result(self, call_id: int, value) -> bool:
        sent = self._send_value(protocol.RESULT, call_id, value)
        if sent:  # else error() has counted it
            self.stats.call_answered()
        return sent

    def chunk(self, call_id: int, value) -> bool:
        """False when the value could not be sent (an ERROR went out instead)."""
        return self._send_value(protocol.CHUNK, call_id, value)

    def end(self, call_id: int) -> None:
        self._outbox.data(protocol.END, {"id": call_id})
        self.stats.call_answered()

    def fail(self, call_id: int, exc: BaseException, kind: str | None = None) -> None:
        """ERROR for an exception; its kind follows the doc's mapping unless given."""
        kind = kind or call_error_kind(exc)
        log.log(logging.WARNING if kind == "invalid" else logging.ERROR,
                "call %s failed (%s)", call_id, kind, exc_info=exc)
        self.error(call_id, kind, exception_text(exc))

    def error(self, call_id: int, kind: str, message: str) -> None:
        self._outbox.data(protocol.ERROR, {"id": call_id, "kind": kind, "message": message})
        self.stats.call_answered()

    def _send_value(self, msg_type: int, call_id: int, value) -> bool:
        # Encoded before sending, so a value that cannot travel becomes ERROR
        # internal instead of a lost message.
        try:
            frame = protocol.encode(msg_type, {"id": call_id, "value": to_plain(value)})
        except Exception as exc:
            # Our own conversion's traceback says nothing the message does not.
            log.error("call %s: result cannot be sent: %s", call_id, exception_text(exc),
                      exc_info=not isinstance(exc, NotPlainValue))
            self.error(call_id, "internal", exception_text(exc))
            return False
        self._outbox.send_data(frame)
        return True
