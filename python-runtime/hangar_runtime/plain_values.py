"""Turn whatever an engine returns into values msgpack can carry unchanged.

Engines hand back numpy arrays, numpy scalars, tuples and dicts with non-string
keys; the wire only has nil, bool, int, float, str, bin, array and map (with
string keys). Anything else must fail loudly here rather than reach msgpack,
where the error would be vague and hard to pin on a place in the value."""

import numpy as np

# msgpack integers are at most 64 bits: int64 for negatives, uint64 for the rest.
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1

# numpy dtype kinds whose tolist() already yields plain Python values
# (bool, signed, unsigned, float, str, bytes), so they need no walk.
_FLAT_KINDS = frozenset("biufUS")


class NotPlainValue(TypeError):
    """A value msgpack cannot carry. `path` locates it inside the whole result."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what
        self.path: list = []

    def __str__(self) -> str:
        where = "".join(f"[{p!r}]" for p in self.path)
        at = f" at value{where}" if where else ""
        return f"Cannot send the result{at}: {self.what}"


def to_plain(value):
    return _convert(value)


def _convert(value):
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return _from_array(value)
    if isinstance(value, np.generic):
        return _from_numpy_scalar(value)
    # Subclasses (IntEnum, str subclasses, ...) are normalised to the exact base
    # type so msgpack sees nothing it might treat specially.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise NotPlainValue(f"integer {value} does not fit in 64 bits")
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (list, tuple)):
        return _from_sequence(value)
    if isinstance(value, dict):
        return _from_dict(value)
    raise NotPlainValue(f"{_type_name(value)} has no msgpack form")


def _from_array(array: np.ndarray):
    kind = array.dtype.kind
    if kind in _FLAT_KINDS:
        return array.tolist()
    if kind == "O":
        return _convert(array.tolist())
    raise NotPlainValue(f"numpy array of dtype {array.dtype} has no msgpack form")


def _from_numpy_scalar(scalar: np.generic):
    if scalar.dtype.kind in "Mm":
        # .item() would give a datetime or, for ns units, a bare int: neither says what it is.
        raise NotPlainValue(f"numpy {scalar.dtype} has no msgpack form")
    item = scalar.item()
    if isinstance(item, np.generic):
        raise NotPlainValue(f"numpy {scalar.dtype} has no msgpack form")
    return _convert(item)


def _from_sequence(items):
    out = []
    for index, item in enumerate(items):
        try:
            out.append(_convert(item))
        except NotPlainValue as exc:
            exc.path.insert(0, index)
            raise
    return out


def _from_dict(mapping: dict) -> dict:
    out = {}
    for key, item in mapping.items():
        name = _key(key)
        try:
            out[name] = _convert(item)
        except NotPlainValue as exc:
            exc.path.insert(0, name)
            raise
    return out


def _key(key) -> str:
    # The doc says maps use string keys; numbers (a label -> score map, say) are
    # spelled out, anything else has no sensible spelling.
    if isinstance(key, str):
        return str(key)
    if isinstance(key, np.generic):
        key = key.item()
    if key is None or isinstance(key, (bool, int, float)):
        return str(key)
    raise NotPlainValue(f"map key of type {_type_name(key)} cannot become a string key")


def _type_name(value) -> str:
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
