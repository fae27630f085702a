import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from harness import Runtime

# Tests never reach the network: a hub lookup must fail at once, not hang.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

# test/fixtures/tiny_models.py at the repository root: shared with the
# TypeScript integration tests.
TINY_MODELS = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "tiny_models.py"


def short_tmpdir() -> Path:
    # Unix socket paths are limited to about 100 bytes, too short for pytest's tmp_path.
    return Path(tempfile.mkdtemp(prefix="hrt", dir="/tmp"))


@pytest.fixture
def workdir():
    path = short_tmpdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def spawn(workdir):
    """spawn(replica, **options) -> a started Runtime, killed at the end of the test."""
    started = []

    def _spawn(replica: str = "model-0", **options) -> Runtime:
        runtime = Runtime(workdir, replica, **options)
        started.append(runtime)
        return runtime

    yield _spawn
    for runtime in started:
        runtime.close()


def fixture_module(name: str):
    """test/fixtures/<name>.py as a module (fixtures shared with the TypeScript tests)."""
    spec = importlib.util.spec_from_file_location(name, TINY_MODELS.parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tiny_models_module():
    """test/fixtures/tiny_models.py (its tokenizer and seed, for tests that build their own)."""
    return fixture_module("tiny_models")


def _cached(kind: str) -> dict:
    # test/fixtures/model_cache.py: built once per machine, shared with the vitest files.
    return fixture_module("model_cache").get(kind)


@pytest.fixture(scope="session")
def tiny_llm() -> dict:
    """The tiny LLM of test/fixtures/tiny_models.py, from the test model cache:
    {path, eos_token_id, vocab_size}."""
    return _cached("llm")


@pytest.fixture(scope="session")
def tiny_lora() -> dict:
    """The tiny LLM with two LoRA adapters made with peft: {path, adapters: {a, b}, ...}."""
    return _cached("lora")


@pytest.fixture(scope="session")
def tiny_vision() -> dict:
    """The tiny LLaVA with its processor: {path, image_tokens, ...}."""
    return _cached("vision")


@pytest.fixture(scope="session")
def tiny_embedder() -> dict:
    """The tiny sentence-transformers BERT of test/fixtures/tiny_models.py:
    {path, dimensions, max_tokens}."""
    return _cached("embedder")


@pytest.fixture(scope="session")
def tiny_cross_encoder() -> dict:
    """The tiny one-label BERT cross-encoder of test/fixtures/tiny_models.py:
    {path, dimensions, max_tokens}."""
    return _cached("cross-encoder")
