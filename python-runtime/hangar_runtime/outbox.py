"""The work loop's way to send.

Data messages (PROGRESS, READY, LOAD_FAILED and every call's answers) leave on the
work loop's own DEALER, the *writer*, connected to the control plane's data socket
under the routing id `<replica>/out` (protocol v3). No other thread touches it, so
a token leaves the moment the work loop has it: no hand-off to the I/O thread,
which would need the GIL (held by the work loop) and a free core (taken by the
engine) before it could pass the frame on, often milliseconds on a busy machine.

Control messages (DEAD) and the request to stop still go through the I/O thread,
which alone touches the other two DEALERs (zmq sockets are not thread-safe): over
an inproc PUSH, two frames each, a channel and the encoded protocol frame."""

import threading

import zmq

from . import protocol
from .curve_keys import CurveKeys

ENDPOINT = "inproc://hangar-runtime-outbox"
CONTROL = b"c"
STOP = b"s"  # second frame: linger in ms for closing the DEALERs
# `/` never appears in a replica id (model uids forbid it), so the writer's id can
# never be another replica's.
WRITER_SUFFIX = "/out"


def writer_identity(replica: str) -> bytes:
    return (replica + WRITER_SUFFIX).encode("utf-8")


class Outbox:
    def __init__(self, ctx: zmq.Context, io_stopping: threading.Event, data_endpoint: str, replica: str,
                 curve: CurveKeys | None = None):
        self._io_stopping = io_stopping
        self._push = ctx.socket(zmq.PUSH)
        self._push.linger = 0
        self._push.connect(ENDPOINT)
        self._writer = ctx.socket(zmq.DEALER)
        self._writer.linger = 0
        self._writer.setsockopt(zmq.ROUTING_ID, writer_identity(replica))
        if curve is not None:
            curve.apply(self._writer)
        # The I/O thread connected its DEALER to the same endpoint already, so a bad
        # endpoint has been refused before we get here.
        self._writer.connect(data_endpoint)

    def data(self, msg_type: int, body: dict) -> None:
        self.send_data(protocol.encode(msg_type, body))

    def control(self, msg_type: int, body: dict) -> None:
        self._send(CONTROL, protocol.encode(msg_type, body))

    def send_data(self, frame: bytes) -> None:
        """Send an already encoded frame, so a caller can encode first and turn an
        encoding failure into a protocol error instead of a lost message. Blocks while
        the control plane is a high-water mark behind: back-pressure on the engine."""
        if self._io_stopping.is_set():
            return  # after SHUTDOWN nobody is waiting for it
        self._writer.send(frame, copy=len(frame) < _ZERO_COPY_BYTES)

    def stop(self, linger_ms: int) -> None:
        """Ask the I/O thread to send what it holds and close its DEALERs."""
        self._send(STOP, str(int(linger_ms)).encode())

    def close(self, linger_ms: int = 0) -> None:
        """A nonzero linger lets a last LOAD_FAILED reach the control plane;
        Context.term() in main waits for it."""
        self._writer.close(linger=linger_ms)
        self._push.close(linger=0)

    def _send(self, channel: bytes, frame: bytes) -> None:
        # After SHUTDOWN the I/O thread has closed its end; a send would block
        # forever with nobody reading, and nobody is waiting for the message.
        if self._io_stopping.is_set():
            return
        self._push.send_multipart([channel, frame])


# pyzmq copies small frames (cheaper than tracking a zero-copy one); a big RESULT
# (an embedding matrix, an image) is handed over without a copy.
_ZERO_COPY_BYTES = 64 * 1024
