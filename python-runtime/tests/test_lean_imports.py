"""engines/lean_imports.py: transformers loads without scikit-learn, and scikit-learn
stays importable for everything else in the process."""

import subprocess
import sys

import pytest
from harness import RUNTIME_DIR

pytestmark = pytest.mark.integration  # a Python that imports torch and transformers

PROBE = """
import sys
from hangar_runtime.engines.lean_imports import import_transformers_without_sklearn
import_transformers_without_sklearn()
import transformers.generation.utils  # what every model class imports
print("sklearn" in sys.modules)
import sklearn.metrics  # still importable by anything that asks for it
print(sklearn.metrics.roc_curve.__name__)
"""


def test_transformers_imports_without_scikit_learn_which_stays_importable():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=RUNTIME_DIR, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "roc_curve"]
