"""The flexible `transformers` launcher: a Hugging Face pipeline over the model's
folder, as Xinference's (`xinference.model.flexible.launchers.transformers`).
`launcher_args` are pipeline()'s keywords (`task`, and whatever else it takes), and
`infer(*args, **kwargs)` calls the pipeline: `{"args": ["I love it"]}` to a
text-classification model answers `[{"label": ..., "score": ...}]`."""

from ..errors import InvalidModel, exception_text
from .base import Engine, Progress
from .model_uri import local_path

# Xinference's launcher takes these itself; here the replica's GPUs say where it runs.
_OWN_ARGS = ("device",)


class TransformersPipelineEngine(Engine):
    name = "transformers_pipeline"

    def __init__(self):
        self._pipeline = None
        self._task = ""

    def load(self, spec: dict, progress: Progress) -> None:
        path = local_path(spec.get("model_uri"))
        launcher_args = spec.get("launcher_args") or {}
        if not isinstance(launcher_args, dict):
            raise InvalidModel(f"launcher_args must be a map, got {type(launcher_args).__name__}")
        options = {k: v for k, v in launcher_args.items() if k not in _OWN_ARGS}
        progress(0.5, "load", f"Loading a transformers pipeline from {path}")
        from transformers import pipeline

        from .torch_device import pick_device
        try:
            self._pipeline = pipeline(model=path, device=pick_device(), **options)
        # The folder or the arguments are the model's fault: a missing task the config
        # cannot tell, an unknown keyword, weights that do not load.
        except Exception as exc:
            raise InvalidModel(f"Cannot build a transformers pipeline from {path}: "
                               f"{type(exc).__name__}: {exception_text(exc)}") from exc
        self._task = str(getattr(self._pipeline, "task", "") or "")
        progress(1.0, "load", f"Loaded a {self._task or 'transformers'} pipeline")

    def describe(self) -> dict:
        return {"task": self._task}

    def methods(self) -> dict:
        return {"infer": self.infer}

    def infer(self, *args, **kwargs):
        try:
            return self._pipeline(*args, **kwargs)
        # What the pipeline refuses of its input (a wrong type, an unknown keyword) is the request's fault.
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"The {self._task or 'transformers'} pipeline refused the input: "
                             f"{type(exc).__name__}: {exception_text(exc)}") from exc
