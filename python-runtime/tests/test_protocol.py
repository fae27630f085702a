import msgpack
import pytest

from hangar_runtime import protocol


def test_type_numbers_match_the_doc():
    assert protocol.PROTOCOL_VERSION == 3
    assert (protocol.HELLO, protocol.LOAD, protocol.PROGRESS, protocol.READY, protocol.LOAD_FAILED) == (1, 2, 3, 4, 5)
    assert (protocol.CALL, protocol.RESULT, protocol.CHUNK, protocol.END, protocol.ERROR) == (0x10, 0x11, 0x12, 0x13, 0x14)
    assert (protocol.PING, protocol.PONG, protocol.ABORT, protocol.SHUTDOWN, protocol.DEAD) == (0x20, 0x21, 0x22, 0x23, 0x24)


def test_encode_is_type_byte_then_msgpack_map():
    frame = protocol.encode(protocol.RESULT, {"id": 7, "value": b"\x00\x01"})
    assert frame[0] == 0x11
    # bytes must travel as msgpack bin (0xc4), not str
    assert msgpack.unpackb(frame[1:], raw=True) == {b"id": 7, b"value": b"\x00\x01"}
    assert b"\xc4\x02\x00\x01" in frame


def test_decode_round_trip():
    body = {"id": 3, "method": "infer", "args": [[1.5, 2]], "kwargs": {"k": None}, "stream": True}
    assert protocol.decode(protocol.encode(protocol.CALL, body)) == (protocol.CALL, body)


@pytest.mark.parametrize("frame", [b"", b"\x10", b"\x10\xc1", b"\x10" + msgpack.packb([1, 2]),
                                   b"\x10" + msgpack.packb({}) + b"\x00"])
def test_decode_rejects_malformed_frames(frame):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(frame)


def test_encode_rejects_non_map_body_and_bad_type():
    with pytest.raises(TypeError):
        protocol.encode(protocol.RESULT, [1])
    with pytest.raises(ValueError):
        protocol.encode(256, {})
