"""engines/lean_imports.py: transformers loads without scikit-learn for the engines
that never use it, and scikit-learn stays importable for everything else."""

import subprocess
import sys

import pytest
from harness import RUNTIME_DIR

pytestmark = pytest.mark.integration  # a Python that imports torch and transformers

PROBE = """
import sys
from hangar_runtime.engines.registry import engine_class
engine_class({engine!r})
import transformers.generation.utils  # what every model class imports
print("sklearn" in sys.modules)
import sklearn.metrics  # still importable by anything that asks for it
print(sklearn.metrics.roc_curve.__name__)
"""


def probe(engine: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(engine=engine)], cwd=RUNTIME_DIR,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_transformers_engine_loads_transformers_without_scikit_learn():
    assert probe("transformers") == ["False", "roc_curve"]

