"""The `sklearn` engine: a fitted estimator saved with joblib.dump or pickle."""

import os

import joblib
import numpy as np

from ..errors import InvalidModel, exception_text
from .base import Engine, Progress
from .model_uri import local_path

ALLOWED_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform")


class SklearnEngine(Engine):
    name = "sklearn"

    def __init__(self):
        self._model = None
        self._available: list[str] = []

    def load(self, spec: dict, progress: Progress) -> None:
        path = local_path(spec.get("model_uri"))
        if not os.path.exists(path):
            raise InvalidModel(f"Model file does not exist: {path}")
        if not os.path.isfile(path):
            raise InvalidModel(f"Model path is not a file: {path}")
        progress(0.8, "load", f"Loading {path}")
        try:
            # joblib.load also reads plain pickles.
            model = joblib.load(path)
        except Exception as exc:
            raise InvalidModel(f"Cannot load model file {path}: {type(exc).__name__}: {exception_text(exc)}") from exc
        # getattr, not hasattr: scikit-learn hides methods a fitted model cannot
        # serve (predict_proba of an SVC without probability=True) behind attribute errors.
        self._available = [m for m in ALLOWED_METHODS if callable(getattr(model, m, None))]
        if not self._available:
            raise InvalidModel(f"Model file {path} holds a {_class_name(model)}, "
                               f"which has none of {', '.join(ALLOWED_METHODS)}")
        self._model = model
        progress(1.0, "load", f"Loaded {_class_name(model)}")

    def describe(self) -> dict:
        description = {"model_class": _class_name(self._model), "methods": list(self._available)}
        n_features = getattr(self._model, "n_features_in_", None)
        if n_features is not None:
            description["n_features_in"] = int(n_features)
        return description

    def methods(self) -> dict:
        return {"infer": self.infer}

    def infer(self, *args, method: str = "predict"):
        if method not in ALLOWED_METHODS:
            raise ValueError(f"Unknown sklearn method {method!r}; allowed: {', '.join(ALLOWED_METHODS)}")
        if method not in self._available:
            raise ValueError(f"This {_class_name(self._model)} has no {method}; "
                             f"it has: {', '.join(self._available)}")
        if len(args) != 1:
            raise ValueError(f"infer takes exactly one positional argument, the input rows; got {len(args)}")
        return getattr(self._model, method)(np.asarray(args[0]))


def _class_name(model) -> str:
    cls = type(model)
    return f"{cls.__module__}.{cls.__qualname__}"
