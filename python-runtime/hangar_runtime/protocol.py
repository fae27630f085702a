"""Runtime protocol v3 framing: one ZeroMQ frame is a type byte followed by one
msgpack map. The control plane shares no code with us, so this module and
docs/runtime-protocol.md must agree byte for byte."""

import msgpack

PROTOCOL_VERSION = 3

HELLO = 0x01
LOAD = 0x02
PROGRESS = 0x03
READY = 0x04
LOAD_FAILED = 0x05
CALL = 0x10
RESULT = 0x11
CHUNK = 0x12
END = 0x13
ERROR = 0x14
# v2: the RESULT, CHUNK, END and ERROR messages of many calls in one frame.
BATCH = 0x15
PING = 0x20
PONG = 0x21
ABORT = 0x22
SHUTDOWN = 0x23
DEAD = 0x24

NAMES = {
    HELLO: "HELLO", LOAD: "LOAD", PROGRESS: "PROGRESS", READY: "READY",
    LOAD_FAILED: "LOAD_FAILED", CALL: "CALL", RESULT: "RESULT", CHUNK: "CHUNK",
    END: "END", ERROR: "ERROR", BATCH: "BATCH", PING: "PING", PONG: "PONG", ABORT: "ABORT",
    SHUTDOWN: "SHUTDOWN", DEAD: "DEAD",
}


class ProtocolError(ValueError):
    """A frame that does not follow the framing rules (never a reason to crash)."""


def encode(msg_type: int, body: dict) -> bytes:
    if not isinstance(msg_type, int) or not 0 <= msg_type <= 0xFF:
        raise ValueError(f"message type must fit in one byte, got {msg_type!r}")
    if not isinstance(body, dict):
        raise TypeError(f"message body must be a map, got {type(body).__name__}")
    return bytes([msg_type]) + msgpack.packb(body, use_bin_type=True)


def encode_batch(items: list) -> bytes:
    """One BATCH frame: items are [type, body] pairs, in the order they happened."""
    return bytes([BATCH]) + msgpack.packb({"items": items}, use_bin_type=True)


def decode(frame: bytes) -> tuple[int, dict]:
    if not frame:
        raise ProtocolError("empty frame")
    try:
        # raw=False: msgpack str -> Python str, bin -> bytes, as the doc promises.
        body = msgpack.unpackb(frame[1:], raw=False)
    except Exception as exc:
        raise ProtocolError(f"body of message type 0x{frame[0]:02x} is not valid msgpack: {exc}") from exc
    if not isinstance(body, dict):
        raise ProtocolError(f"body of message type 0x{frame[0]:02x} is a {type(body).__name__}, not a map")
    return frame[0], body
