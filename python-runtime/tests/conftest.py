import shutil
import tempfile
from pathlib import Path

import pytest

from harness import Runtime


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
