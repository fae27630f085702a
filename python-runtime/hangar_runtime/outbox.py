"""The work loop's way to send. It owns a PUSH socket into the I/O thread, which
alone touches the DEALERs (zmq sockets are not thread-safe). Each message is two
frames: a channel (which DEALER, or "stop") and the encoded protocol frame."""

import threading

import zmq

from . import protocol

ENDPOINT = "inproc://hangar-runtime-outbox"
DATA = b"d"
CONTROL = b"c"
STOP = b"s"  # second frame: linger in ms for closing the DEALERs


class Outbox:
    def __init__(self, ctx: zmq.Context, io_stopping: threading.Event):
        self._io_stopping = io_stopping
        self._push = ctx.socket(zmq.PUSH)
        self._push.linger = 0
        self._push.connect(ENDPOINT)

    def data(self, msg_type: int, body: dict) -> None:
        self.send_data(protocol.encode(msg_type, body))

    def control(self, msg_type: int, body: dict) -> None:
        self._send(CONTROL, protocol.encode(msg_type, body))

    def send_data(self, frame: bytes) -> None:
        """Send an already encoded frame, so a caller can encode first and turn an
        encoding failure into a protocol error instead of a lost message."""
        self._send(DATA, frame)

    def stop(self, linger_ms: int) -> None:
        """Ask the I/O thread to send what it holds and close the DEALERs."""
        self._send(STOP, str(int(linger_ms)).encode())

    def close(self) -> None:
        self._push.close(linger=0)

    def _send(self, channel: bytes, frame: bytes) -> None:
        # After SHUTDOWN the I/O thread has closed its end; a send would block
        # forever with nobody reading, and nobody is waiting for the message.
        if self._io_stopping.is_set():
            return
        self._push.send_multipart([channel, frame])
