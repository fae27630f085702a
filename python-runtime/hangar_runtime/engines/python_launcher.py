"""The `python` engine: a user's launcher module defining
`load(**launcher_args)` and `infer(model, *args, **kwargs)`."""

import importlib.util
import os
import sys
import uuid

from ..errors import InvalidModel, exception_text
from .base import Engine, Progress
from .model_uri import local_path

_REQUIRED = ("load", "infer")


class PythonLauncherEngine(Engine):
    name = "python"

    def __init__(self):
        self._path = ""
        self._model = None
        self._infer = None

    def load(self, spec: dict, progress: Progress) -> None:
        path = local_path(spec.get("model_uri"))
        launcher_args = spec.get("launcher_args") or {}
        if not isinstance(launcher_args, dict):
            raise InvalidModel(f"launcher_args must be a map, got {type(launcher_args).__name__}")
        progress(0.8, "load", f"Importing launcher {path}")
        module = _import_launcher(path)
        missing = [name for name in _REQUIRED if not callable(getattr(module, name, None))]
        if missing:
            raise InvalidModel(f"Launcher {path} does not define {' or '.join(f'{m}()' for m in missing)}")
        try:
            model = module.load(**launcher_args)
        # BaseException: a launcher calling sys.exit() in load is still a bad
        # model, and the doc promises exactly one READY or LOAD_FAILED.
        except BaseException as exc:
            raise InvalidModel(f"Launcher {path} load() failed: {type(exc).__name__}: {exception_text(exc)}") from exc
        self._path, self._model, self._infer = path, model, module.infer
        progress(1.0, "load", "Launcher loaded")

    def describe(self) -> dict:
        return {"launcher_path": self._path}

    def methods(self) -> dict:
        return {"infer": self.infer}

    def infer(self, *args, **kwargs):
        return self._infer(self._model, *args, **kwargs)


def _import_launcher(path: str):
    if os.path.isdir(path):
        init = os.path.join(path, "__init__.py")
        if not os.path.isfile(init):
            raise InvalidModel(f"Launcher folder has no __init__.py: {path}")
        location, search = init, [path]  # search locations make relative imports work
    elif os.path.isfile(path) and path.endswith(".py"):
        location, search = path, None
    elif not os.path.exists(path):
        raise InvalidModel(f"Launcher does not exist: {path}")
    else:
        raise InvalidModel(f"Launcher must be a .py file or a folder with __init__.py: {path}")
    # A unique name: two launchers called model.py must not share a sys.modules slot.
    name = f"hangar_launcher_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, location, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise InvalidModel(f"Cannot import launcher {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # relative imports look the package up here
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        raise InvalidModel(f"Importing launcher {path} failed: {type(exc).__name__}: {exception_text(exc)}") from exc
    return module
