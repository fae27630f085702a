"""Which engine class a LOAD's `engine` field names."""

import importlib

from ..errors import InvalidModel
from .base import Engine
from .python_launcher import PythonLauncherEngine

ENGINES: dict[str, type[Engine]] = {cls.name: cls for cls in (PythonLauncherEngine,)}

# Engines whose module is imported only when a LOAD names them: they pull in
# PyTorch and friends, seconds of import time that a scikit-learn replica (or a
# machine without them installed) should never pay; joblib alone is a fifth of a
# light runtime's start. name -> (module, class).
LAZY_ENGINES: dict[str, tuple[str, str]] = {
    "sklearn": ("hangar_runtime.engines.sklearn_engine", "SklearnEngine"),
    "transformers": ("hangar_runtime.engines.transformers_llm.engine", "TransformersLLMEngine"),
    "transformers_pipeline": ("hangar_runtime.engines.transformers_pipeline", "TransformersPipelineEngine"),
    "sentence_transformers": ("hangar_runtime.engines.sentence_transformers.engine", "SentenceTransformersEngine"),
    "vllm": ("hangar_runtime.engines.vllm_llm.engine", "VllmEngine"),
    "simulator": ("hangar_runtime.engines.simulator.engine", "SimulatorEngine"),
    "pocketsphinx": ("hangar_runtime.engines.pocketsphinx_engine.engine", "PocketsphinxEngine"),
    "espeak": ("hangar_runtime.engines.espeak.engine", "EspeakEngine"),
    "tesseract": ("hangar_runtime.engines.tesseract.engine", "TesseractEngine"),
    "transformers_audio": ("hangar_runtime.engines.transformers_audio.engine", "TransformersAudioEngine"),
    "transformers_image": ("hangar_runtime.engines.transformers_image.engine", "TransformersImageEngine"),
    "diffusers": ("hangar_runtime.engines.diffusers_engine.engine", "DiffusersEngine"),
}


def engine_class(name) -> type[Engine]:
    if not isinstance(name, str):
        raise InvalidModel(f"Unknown engine: {name}")
    cls = ENGINES.get(name)
    if cls is None and name in LAZY_ENGINES:
        module_name, class_name = LAZY_ENGINES[name]
        # An ImportError here (the engine's libraries are missing) is the
        # machine's fault, not the model's: it is reported as "internal".
        cls = getattr(importlib.import_module(module_name), class_name)
    if cls is None:
        raise InvalidModel(f"Unknown engine: {name}")
    return cls
