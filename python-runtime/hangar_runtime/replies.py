"""How a call's answer goes out: RESULT, CHUNK, END and ERROR frames through the
Outbox. Shared by the one-at-a-time path (work_loop) and the batched one
(batch_calls), so both encode values and name failures the same way.

Inside `collect()` (a batching engine's step) the messages are gathered and leave
as one BATCH frame (protocol v2) when the step ends: the I/O thread and the control
plane then handle one message per engine step instead of one per token."""

import logging
import os
from contextlib import contextmanager

from . import protocol
from .errors import call_error_kind, error_param, exception_text
from .outbox import Outbox
from .plain_values import NotPlainValue, to_plain
from .runtime_stats import RuntimeStats

log = logging.getLogger("hangar_runtime.work")


class Replies:
    def __init__(self, outbox: Outbox, stats: RuntimeStats | None = None):
        self._outbox = outbox
        # Counts every call's last message, for the queue depth the runtime reports.
        self.stats = stats if stats is not None else RuntimeStats()
        self._gathered: list | None = None  # [type, body] pairs while collecting
        # HANGAR_TOKEN_RELAY=per-token: one frame per message, as in protocol v1 days
        # (the baseline of bench/llm-relay.ts; the control plane reads the same variable).
        self._batching = os.environ.get("HANGAR_TOKEN_RELAY") != "per-token"

    @contextmanager
    def collect(self):
        """Everything answered inside goes out together when the block ends."""
        if self._gathered is not None or not self._batching:  # nested: the outer block sends
            yield
            return
        self._gathered = []
        try:
            yield
        finally:
            items, self._gathered = self._gathered, None
            self._send_gathered(items)

    # Each call's last message is counted answered before it leaves, so a PING sent after
    # the answer arrived never sees the call still queued (stats are read on another thread).

    def result(self, call_id: int, value) -> bool:
        encoded = self._encode_value(protocol.RESULT, call_id, value)
        if encoded is None:  # error() has counted it
            return False
        self.stats.call_answered()
        self._deliver(protocol.RESULT, *encoded)
        return True

    def chunk(self, call_id: int, value) -> bool:
        """False when the value could not be sent (an ERROR went out instead)."""
        encoded = self._encode_value(protocol.CHUNK, call_id, value)
        if encoded is None:
            return False
        self._deliver(protocol.CHUNK, *encoded)
        return True

    def end(self, call_id: int) -> None:
        self.stats.call_answered()
        self._send(protocol.END, {"id": call_id})

    def fail(self, call_id: int, exc: BaseException, kind: str | None = None) -> None:
        """ERROR for an exception; its kind follows the doc's mapping unless given."""
        kind = kind or call_error_kind(exc)
        if kind == "invalid":
            # The caller's input was at fault, and the answer says why: one line, no
            # traceback (anyone could fill the log with them, one bad upload each) and
            # not the message, which may quote the input.
            log.warning("call %s refused (invalid input: %s)", call_id, type(exc).__name__)
        else:
            log.error("call %s failed (%s)", call_id, kind, exc_info=exc)
        self.error(call_id, kind, exception_text(exc), error_param(exc) if kind == "invalid" else None)

    def error(self, call_id: int, kind: str, message: str, param: str | None = None) -> None:
        body = {"id": call_id, "kind": kind, "message": message}
        if param:
            body["param"] = param
        self.stats.call_answered()
        self._send(protocol.ERROR, body)

    def _send(self, msg_type: int, body: dict) -> None:
        if self._gathered is not None:
            self._gathered.append([msg_type, body])
        else:
            self._outbox.data(msg_type, body)

    def _encode_value(self, msg_type: int, call_id: int, value):
        """(body, frame or None inside a batch), or None after answering ERROR internal:
        a value is converted (and, outside a batch, encoded) before anything is sent, so
        one that cannot travel becomes an ERROR instead of a lost message."""
        try:
            body = {"id": call_id, "value": _plain(value)}
            return body, (None if self._gathered is not None else protocol.encode(msg_type, body))
        except Exception as exc:
            # Our own conversion's traceback says nothing the message does not.
            log.error("call %s: result cannot be sent: %s", call_id, exception_text(exc),
                      exc_info=not isinstance(exc, NotPlainValue))
            self.error(call_id, "internal", exception_text(exc))
            return None

    def _deliver(self, msg_type: int, body: dict, frame) -> None:
        if frame is None:
            self._gathered.append([msg_type, body])
        else:
            self._outbox.send_data(frame)

    def _send_gathered(self, items: list) -> None:
        if not items:
            return
        if len(items) == 1:
            self._outbox.data(*items[0])
            return
        self._outbox.send_data(protocol.encode_batch(items))


def _plain(value):
    # The hot case of a stream (a text delta) skips the general walk.
    if type(value) is dict and len(value) == 1 and type(value.get("text")) is str:
        return value
    return to_plain(value)
