"""The simulator's launch options (the launch body's extra fields, `engine_kwargs`),
checked: a bad one fails the load as `invalid`, naming the field."""

import math
from dataclasses import dataclass, fields

from ...errors import InvalidModel


@dataclass(frozen=True)
class SimulatorOptions:
    step_ms: float = 20.0  # one engine step (one token for every running request) this often
    ttft_ms: float = 0.0  # a request's first token comes at the first step this long after it arrived
    max_batch: int = 256  # requests that generate at once; the rest wait in arrival order


OPTION_NAMES = frozenset(f.name for f in fields(SimulatorOptions))


def unread_options(engine_kwargs) -> list[str]:
    """The extra launch fields the simulator does not read: a misspelt option
    (`stepms`) would otherwise leave the default in place without a word."""
    return sorted(k for k in (engine_kwargs or {}) if k not in OPTION_NAMES) if isinstance(engine_kwargs, dict) else []


def parse_options(engine_kwargs) -> SimulatorOptions:
    if engine_kwargs is None:
        engine_kwargs = {}
    if not isinstance(engine_kwargs, dict):
        raise InvalidModel(f"engine_kwargs must be a map, got {type(engine_kwargs).__name__}")
    defaults = SimulatorOptions()
    return SimulatorOptions(
        step_ms=_number(engine_kwargs, "step_ms", defaults.step_ms, 0.0, 60_000.0),
        ttft_ms=_number(engine_kwargs, "ttft_ms", defaults.ttft_ms, 0.0, 600_000.0),
        max_batch=int(_number(engine_kwargs, "max_batch", defaults.max_batch, 1, 65_536, integer=True)),
    )


def _number(kwargs: dict, name: str, default: float, low: float, high: float, integer: bool = False) -> float:
    value = kwargs.get(name)
    if value is None:
        return default
    # Launch fields may come from the CLI as strings ("--step_ms 5").
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise InvalidModel(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidModel(f"{name} must be a number, got {value!r}")
    if integer and not float(value).is_integer():
        raise InvalidModel(f"{name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise InvalidModel(f"{name} must be between {low:g} and {high:g}, got {value}")
    return float(value)
