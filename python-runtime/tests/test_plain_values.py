import enum

import msgpack
import numpy as np
import pytest

from hangar_runtime.errors import call_error_kind
from hangar_runtime.plain_values import NotPlainValue, to_plain


def test_numpy_arrays_become_nested_lists():
    value = to_plain(np.arange(6, dtype=np.int64).reshape(2, 3))
    assert value == [[0, 1, 2], [3, 4, 5]]
    assert type(value[0][0]) is int


def test_numpy_scalars_become_python_numbers():
    value = to_plain([np.float32(0.5), np.int8(-3), np.bool_(True), np.uint64(2**64 - 1)])
    assert value == [0.5, -3, True, 2**64 - 1]
    assert [type(v) for v in value] == [float, int, bool, int]


def test_tuples_dict_keys_and_bytes():
    value = to_plain({1: (1, 2), np.int64(2): "x", "k": b"\xff", None: bytearray(b"a")})
    assert value == {"1": [1, 2], "2": "x", "k": b"\xff", "None": b"a"}
    msgpack.packb(value, use_bin_type=True)  # and msgpack really takes it


def test_object_arrays_are_walked():
    array = np.array([np.float64(1.5), (1, 2), "s"], dtype=object)
    assert to_plain(array) == [1.5, [1, 2], "s"]


def test_subclasses_are_normalised():
    class Colour(enum.IntEnum):
        RED = 1

    value = to_plain({"c": Colour.RED, "s": np.str_("txt")})
    assert type(value["c"]) is int and value["c"] == 1
    assert type(value["s"]) is str and value["s"] == "txt"


@pytest.mark.parametrize("bad, fragment", [
    ({1, 2}, "set"),
    (object(), "object"),
    (2**64, "64 bits"),
    (np.array([1j]), "complex"),
    (np.datetime64("2020-01-01"), "datetime64"),
    (1 + 2j, "complex"),
])
def test_unconvertible_values_raise(bad, fragment):
    with pytest.raises(NotPlainValue) as info:
        to_plain(bad)
    assert fragment in str(info.value)


def test_error_names_where_the_bad_value_is():
    with pytest.raises(NotPlainValue) as info:
        to_plain({"rows": [[1, 2], [3, {4}]]})
    assert "value['rows'][1][1]" in str(info.value)


def test_unconvertible_result_is_internal_not_invalid():
    # NotPlainValue is a TypeError, which would otherwise read as bad input.
    with pytest.raises(NotPlainValue) as info:
        to_plain(object())
    assert isinstance(info.value, TypeError)
    assert call_error_kind(info.value) == "internal"
    assert call_error_kind(TypeError("x")) == "invalid"
    assert call_error_kind(KeyError("x")) == "invalid"
    assert call_error_kind(RuntimeError("x")) == "internal"
