"""Which engine class a LOAD's `engine` field names."""

from ..errors import InvalidModel
from .base import Engine
from .python_launcher import PythonLauncherEngine
from .sklearn_engine import SklearnEngine

ENGINES: dict[str, type[Engine]] = {cls.name: cls for cls in (SklearnEngine, PythonLauncherEngine)}


def engine_class(name) -> type[Engine]:
    cls = ENGINES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise InvalidModel(f"Unknown engine: {name}")
    return cls
