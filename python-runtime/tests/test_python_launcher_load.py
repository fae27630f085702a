"""Loading user launchers (engine `python`), each in its own runtime process."""

import time
from pathlib import Path

import pytest

from harness import DEAD, ERROR, LOAD, LOAD_FAILED, PING, PONG, READY, RESULT, SHUTDOWN, load_spec, without_stats

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


LAUNCHERS = Path(__file__).parent / "launchers"


def test_folder_launcher_with_relative_import(spawn):
    runtime = spawn()
    runtime.hello()
    ready = runtime.load_ok(load_spec("python", f"file://{LAUNCHERS / 'pkg_launcher'}", launcher_args={"offset": 1}))
    assert ready["engine"] == "python"
    assert runtime.ask(1, 5) == (RESULT, {"id": 1, "value": 11})


def _load_fails(runtime, spec) -> dict:
    runtime.hello()
    _, msg_type, body = runtime.load(spec)
    assert msg_type == LOAD_FAILED, body
    assert runtime.wait_exit() == 3
    return body


@pytest.mark.parametrize("source, fragment", [
    ("def load():\n    return 1\n", "infer()"),
    ("def infer(model, x):\n    return x\n", "load()"),
    ("x = 1\n", "load() or infer()"),
    ("def load(:\n", "SyntaxError"),
    ("import no_such_module_here\n", "ModuleNotFoundError"),
])
def test_broken_launchers_fail_as_invalid(spawn, workdir, source, fragment):
    path = workdir / "launcher.py"
    path.write_text(source)
    body = _load_fails(spawn(), load_spec("python", str(path)))
    assert body["kind"] == "invalid"
    assert fragment in body["message"] and str(path) in body["message"]


def test_launcher_load_raising_is_invalid_with_its_text(spawn):
    spec = load_spec("python", str(LAUNCHERS / "toy.py"), launcher_args={"fail": "weights are missing"})
    body = _load_fails(spawn(), spec)
    assert body["kind"] == "invalid"
    assert "weights are missing" in body["message"]


@pytest.mark.parametrize("uri, fragment", [
    ("/nonexistent/launcher.py", "does not exist"),
    ("relative/launcher.py", "absolute"),
    ("s3://bucket/launcher.py", "Unsupported model_uri"),
    (None, "no model_uri"),
])
def test_bad_launcher_locations_are_invalid(spawn, uri, fragment):
    body = _load_fails(spawn(), load_spec("python", uri))
    assert body["kind"] == "invalid" and fragment in body["message"]


def test_folder_without_init_is_invalid(spawn, workdir):
    (workdir / "pkg").mkdir()
    body = _load_fails(spawn(), load_spec("python", str(workdir / "pkg")))
    assert body["kind"] == "invalid" and "__init__.py" in body["message"]


def test_pings_are_answered_during_a_long_load(spawn):
    runtime = spawn()
    runtime.hello()
    runtime.send(LOAD, load_spec("python", str(LAUNCHERS / "toy.py"), launcher_args={"sleep": 2.0}))
    time.sleep(0.5)  # load() is now sleeping in the work loop
    for ts in (1, 2, 3):
        sent = time.monotonic()
        runtime.send_control(PING, {"ts": ts})
        assert without_stats(runtime.recv_control(timeout=1.0)) == (PONG, {"ts": ts})
        assert time.monotonic() - sent < 0.5
    progress, msg_type, body = runtime.finish_load()
    assert (msg_type, body["engine"]) == (READY, "python")
    assert [p["progress"] for p in progress] == [0.8, 1.0]
    assert all(p["stage"] == "load" for p in progress)


def test_user_code_exiting_kills_the_work_loop(spawn):
    runtime = spawn()
    runtime.hello()
    runtime.load_ok(load_spec("python", str(LAUNCHERS / "toy.py")))
    runtime.call(1, "exit")
    msg_type, body = runtime.recv_control()
    assert msg_type == DEAD
    assert "user code called exit" in body["message"]
    assert runtime.wait_exit() == 5


def test_shutdown_while_a_call_is_stuck_still_exits_in_time(spawn):
    runtime = spawn()
    runtime.hello()
    runtime.load_ok(load_spec("python", str(LAUNCHERS / "toy.py")))
    runtime.call(1, "sleep", 60)
    time.sleep(0.3)
    sent = time.monotonic()
    runtime.send_control(SHUTDOWN, {})
    assert runtime.wait_exit(timeout=5) == 0
    assert time.monotonic() - sent < 2.0


def test_call_before_load_is_refused(spawn):
    runtime = spawn()
    runtime.hello()
    msg_type, body = runtime.ask(1, "echo", 1)
    assert (msg_type, body["kind"]) == (ERROR, "invalid")
    # the runtime still takes its LOAD afterwards
    runtime.load_ok(load_spec("python", str(LAUNCHERS / "toy.py")))
    assert runtime.ask(2, "echo", 3)[1]["value"] == 3
