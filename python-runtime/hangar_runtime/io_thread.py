"""The I/O thread: the only code that touches the control DEALER and the data
DEALER the control plane sends to (zmq sockets are not thread-safe).

Every message in passes through here, and HELLO, PONG and what the work loop sends
on control go out from here. It answers PING itself and handles ABORT and SHUTDOWN
at once, so a work loop busy with a long load or call never looks like a dead
runtime and can still be told to stop. The work loop's data messages do not pass
through here: it sends them on its own writer DEALER (outbox.py)."""

import logging
import os
import platform
import queue
import threading
from collections import deque

import zmq

from . import exit_codes, outbox, protocol
from .aborts import AbortRegistry
from .runtime_stats import RuntimeStats
from .curve_keys import CurveKeys
from .watchdog import Heartbeat

log = logging.getLogger("hangar_runtime.io")

# Messages read from one socket per turn, so a burst on one cannot starve the other.
_MAX_DRAIN = 64
# Frames waiting for the control socket (the control plane reads slowly) before we
# stop taking more from the work loop; it then blocks on its PUSH: back-pressure.
_MAX_BACKLOG = 256
# The doc gives 2 s from SHUTDOWN to exit; leave room for process teardown.
SHUTDOWN_GRACE_S = 1.5
# How long HELLO waits for the control connection. Until it is up, the control
# plane's ROUTER would silently drop a PING or SHUTDOWN sent right after HELLO.
_CONTROL_HANDSHAKE_WAIT_MS = 5000


class BadEndpoint(ValueError):
    """An endpoint zmq refuses outright: a command-line error, not a runtime one."""


class IOThread(threading.Thread):
    def __init__(self, ctx: zmq.Context, data_endpoint: str, control_endpoint: str, replica: str,
                 inbox: queue.Queue, aborts: AbortRegistry, heartbeat: Heartbeat,
                 stats: RuntimeStats | None = None, curve: CurveKeys | None = None):
        super().__init__(name="hangar-io", daemon=True)
        self._stats = stats if stats is not None else RuntimeStats()
        self._curve = curve
        self._replica = replica
        self._inbox = inbox
        self._aborts = aborts
        self._heartbeat = heartbeat
        self.stopping = threading.Event()  # set once the DEALERs are about to close
        self._stop_linger_ms = 0
        # Sockets are made and connected here, on the starting thread, so a bad
        # endpoint fails before anything runs; Thread.start() is the full memory
        # barrier zmq asks for when a socket moves to another thread.
        self._sockets: list[zmq.Socket] = []
        try:
            self._pull = self._track(ctx.socket(zmq.PULL))
            self._pull.bind(outbox.ENDPOINT)
            self._control = self._dealer(ctx, replica)
            self._monitor = self._track(self._control.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED))
            _connect(self._control, control_endpoint, "--control")
            self._data = self._dealer(ctx, replica)
            _connect(self._data, data_endpoint, "--data")
        except BaseException:
            for sock in self._sockets:
                sock.close(linger=0)
            raise
        self._pending = {self._data: deque(), self._control: deque()}

    def _track(self, sock: zmq.Socket) -> zmq.Socket:
        sock.linger = 0
        self._sockets.append(sock)
        return sock

    def _dealer(self, ctx: zmq.Context, replica: str) -> zmq.Socket:
        sock = self._track(ctx.socket(zmq.DEALER))
        # Must be set before connect: the control plane checks who is talking by it.
        sock.setsockopt(zmq.ROUTING_ID, replica.encode("utf-8"))
        if self._curve is not None:
            self._curve.apply(sock)
        return sock

    def run(self) -> None:
        try:
            self._await_control_handshake()
            self._pending[self._data].append(protocol.encode(protocol.HELLO, {
                "protocol": protocol.PROTOCOL_VERSION, "pid": os.getpid(),
                "replica": self._replica, "python": platform.python_version(),
            }))
            self._heartbeat.beat()  # the heartbeat timeout counts from HELLO
            self._serve()
            self._close()
        except Exception:
            log.exception("I/O thread crashed")
            os._exit(exit_codes.WORK_LOOP_DIED)

    def _await_control_handshake(self) -> None:
        if not self._monitor.poll(_CONTROL_HANDSHAKE_WAIT_MS):
            log.warning("control socket not connected after %d ms; sending HELLO anyway",
                        _CONTROL_HANDSHAKE_WAIT_MS)
        self._control.disable_monitor()
        self._monitor.close(linger=0)

    def _serve(self) -> None:
        poller = zmq.Poller()
        while True:
            for sock in (self._control, self._data):
                self._flush(sock)
                poller.register(sock, zmq.POLLIN | (zmq.POLLOUT if self._pending[sock] else 0))
            has_room = len(self._pending[self._control]) < _MAX_BACKLOG
            poller.register(self._pull, zmq.POLLIN if has_room else 0)
            events = dict(poller.poll())
            # Control first: a PING or SHUTDOWN must not wait behind a burst of calls.
            if events.get(self._control, 0) & zmq.POLLIN and not self._read(self._control):
                return
            if events.get(self._data, 0) & zmq.POLLIN and not self._read(self._data):
                return
            if events.get(self._pull, 0) & zmq.POLLIN and not self._take_outbound():
                return

    def _read(self, sock: zmq.Socket) -> bool:
        """Handle what has arrived; False once the thread should stop."""
        for _ in range(_MAX_DRAIN):
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return True
            if len(frames) != 1:
                log.warning("ignoring a message of %d frames (the protocol uses one)", len(frames))
            elif not self._on_message(frames[0]):
                return False
        return True

    def _on_message(self, frame: bytes) -> bool:
        try:
            msg_type, body = protocol.decode(frame)
        except protocol.ProtocolError as exc:
            log.warning("ignoring a malformed message: %s", exc)
            return True
        if msg_type == protocol.PING:
            self._heartbeat.beat()
            self._pending[self._control].append(protocol.encode(protocol.PONG, {
                "ts": body.get("ts"), "stats": self._stats.snapshot()}))
        elif msg_type == protocol.ABORT:
            call_id = body.get("id")
            if isinstance(call_id, int) and not isinstance(call_id, bool):
                self._aborts.abort(call_id)
            else:
                log.warning("ignoring ABORT without an integer id: %r", call_id)
        elif msg_type == protocol.SHUTDOWN:
            self._begin_shutdown()
            return False
        elif msg_type in (protocol.LOAD, protocol.CALL):
            if msg_type == protocol.CALL:
                self._stats.call_received()
            self._inbox.put((msg_type, body))
        else:
            name = protocol.NAMES.get(msg_type, f"0x{msg_type:02x}")
            log.warning("ignoring message type %s, which the runtime does not receive", name)
        return True

    def _begin_shutdown(self) -> None:
        log.info("SHUTDOWN received")
        self.stopping.set()
        self._inbox.put((protocol.SHUTDOWN, {}))
        # The work loop may be stuck inside an engine; it cannot be allowed to hold
        # the process past the doc's 2 seconds.
        backstop = threading.Timer(SHUTDOWN_GRACE_S, _exit_after_grace)
        backstop.daemon = True
        backstop.start()

    def _take_outbound(self) -> bool:
        for _ in range(_MAX_DRAIN):
            try:
                channel, frame = self._pull.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return True
            if channel == outbox.STOP:
                self._stop_linger_ms = int(frame)
                return False
            self._pending[self._control].append(frame)
        return True

    def _flush(self, sock: zmq.Socket) -> None:
        pending = self._pending[sock]
        while pending:
            try:
                sock.send(pending[0], zmq.NOBLOCK)
            except zmq.Again:
                return
            pending.popleft()

    def _close(self) -> None:
        self.stopping.set()
        for sock in (self._control, self._data):
            self._flush(sock)
            if self._pending[sock]:
                log.warning("dropping %d unsent messages at exit", len(self._pending[sock]))
        # A nonzero linger (asked for by the work loop) lets a last LOAD_FAILED or
        # DEAD reach the control plane; Context.term() in main waits for it.
        self._data.close(linger=self._stop_linger_ms)
        self._control.close(linger=self._stop_linger_ms)
        self._pull.close(linger=0)


def _connect(sock: zmq.Socket, endpoint: str, option: str) -> None:
    try:
        sock.connect(endpoint)
    except zmq.ZMQError as exc:
        raise BadEndpoint(f"{option}: cannot connect to {endpoint!r}: {exc}") from exc


def _exit_after_grace() -> None:
    log.warning("work loop still busy %.1fs after SHUTDOWN; exiting anyway", SHUTDOWN_GRACE_S)
    os._exit(exit_codes.SHUTDOWN)
