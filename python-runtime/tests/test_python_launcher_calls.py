"""Calls against one real runtime serving tests/launchers/toy.py (engine `python`)."""

import itertools
import shutil
import time
from pathlib import Path

import pytest

from conftest import short_tmpdir
from harness import ABORT, CHUNK, END, ERROR, PING, PONG, RESULT, Runtime, load_spec, without_stats

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


LAUNCHERS = Path(__file__).parent / "launchers"
_ids = itertools.count(1)  # call ids are unique for the life of the runtime


@pytest.fixture(scope="module")
def toy():
    workdir = short_tmpdir()
    runtime = Runtime(workdir, "toy-0")
    # Closed even when the load fails: a Runtime left open holds a zmq context whose
    # collection later blocks (term() waits for its sockets), hanging the session.
    try:
        runtime.hello()
        runtime.ready = runtime.load_ok(load_spec("python", str(LAUNCHERS / "toy.py"), launcher_args={"scale": 3}))
        yield runtime
    finally:
        runtime.close()
        shutil.rmtree(workdir, ignore_errors=True)


def test_ready_describes_the_launcher(toy):
    assert toy.ready["protocol"] == 3
    assert toy.ready["engine"] == "python"
    assert toy.ready["pid"] == toy.process.pid
    assert toy.ready["abilities"] == []
    assert toy.ready["description"] == {"launcher_path": str(LAUNCHERS / "toy.py")}


def test_plain_call_round_trips_values(toy):
    call_id = next(_ids)
    value = {"a": [1, 2.5, None, True], "b": b"\x00\xff", "s": "h\u00e9"}
    assert toy.ask(call_id, "echo", value) == (RESULT, {"id": call_id, "value": value})


def test_numpy_results_become_plain_values(toy):
    msg_type, body = toy.ask(next(_ids), "numpy")
    assert msg_type == RESULT
    assert body["value"] == {"array": [0, 3, 6], "scalar": 0.25, "pair": [1, "a"], "7": [[True, False]]}


def test_stream_sends_chunks_then_end(toy):
    values, msg_type, _ = toy.stream(next(_ids), "count", 4)
    assert (values, msg_type) == ([0, 3, 6, 9], END)


def test_stream_of_a_single_value_is_one_chunk(toy):
    values, msg_type, _ = toy.stream(next(_ids), "echo", "only")
    assert (values, msg_type) == (["only"], END)


def test_non_stream_call_of_a_generator_gets_a_list(toy):
    msg_type, body = toy.ask(next(_ids), "count", 3)
    assert (msg_type, body["value"]) == (RESULT, [0, 3, 6])


def test_stream_failing_midway_ends_with_error(toy):
    values, msg_type, body = toy.stream(next(_ids), "count", 5, fail_at=2)
    assert values == [0, 3]
    assert (msg_type, body["kind"], body["message"]) == (ERROR, "invalid", "bad item 2")


@pytest.mark.parametrize("name, text, kind, message", [
    ("ValueError", "bad rows", "invalid", "bad rows"),
    ("TypeError", "wrong type", "invalid", "wrong type"),
    ("KeyError", "col", "invalid", "'col'"),
    ("RuntimeError", "gpu on fire", "internal", "gpu on fire"),
    ("RuntimeError", "", "internal", "RuntimeError"),
    ("ZeroDivisionError", "", "internal", "ZeroDivisionError"),
])
def test_exceptions_map_to_error_kinds(toy, name, text, kind, message):
    msg_type, body = toy.ask(next(_ids), "raise", name, text)
    assert (msg_type, body["kind"], body["message"]) == (ERROR, kind, message)
    assert "Traceback" not in body["message"]


def test_a_refused_input_is_logged_in_one_line_without_its_text_and_a_failure_with_its_traceback(toy):
    call_id = next(_ids)
    assert toy.ask(call_id, "raise", "ValueError", "secret-ish input text")[1]["kind"] == "invalid"
    failed = next(_ids)
    assert toy.ask(failed, "raise", "RuntimeError", "engine broke")[1]["kind"] == "internal"
    deadline = time.monotonic() + 5
    while f"call {failed} failed" not in toy.stderr() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = toy.stderr()
    refused = log[log.index(f"call {call_id} refused"):log.index(f"call {failed} failed")]
    assert "invalid input: ValueError" in refused
    assert "Traceback" not in refused and "secret-ish" not in refused
    assert "Traceback" in log[log.index(f"call {failed} failed"):]


def test_bad_arguments_are_invalid(toy):
    msg_type, body = toy.ask(next(_ids))  # infer() without `what`: a TypeError
    assert (msg_type, body["kind"]) == (ERROR, "invalid")


def test_unknown_method(toy):
    msg_type, body = toy.ask(next(_ids), engine_method="generate")
    assert (msg_type, body["kind"]) == (ERROR, "unknown_method")
    assert "generate" in body["message"]


def test_unsendable_result_is_internal(toy):
    msg_type, body = toy.ask(next(_ids), "object")
    assert (msg_type, body["kind"]) == (ERROR, "internal")
    assert "object" in body["message"]


def test_unsendable_chunk_ends_stream_with_internal_error(toy):
    values, msg_type, body = toy.stream(next(_ids), "set_chunks")
    assert values == [1]
    assert (msg_type, body["kind"]) == (ERROR, "internal")


def test_abort_stops_a_running_stream(toy):
    call_id = next(_ids)
    toy.call(call_id, "count", 100, delay=0.05, stream=True)
    assert toy.expect(CHUNK)["value"] == 0
    toy.send_control(ABORT, {"id": call_id})
    chunks = 1
    while True:
        msg_type, body = toy.recv()
        if msg_type != CHUNK:
            break
        chunks += 1
    assert (msg_type, body) == (ERROR, {"id": call_id, "kind": "aborted", "message": body["message"]})
    assert chunks < 5
    # the loop goes on serving
    assert toy.ask(next(_ids), "echo", 1)[0] == RESULT


def test_abort_drops_a_queued_call(toy):
    slow, queued = next(_ids), next(_ids)
    toy.call(slow, "sleep", 0.5)
    toy.call(queued, "echo", "never")
    toy.send_control(ABORT, {"id": queued})
    assert toy.expect(RESULT) == {"id": slow, "value": "slept"}
    body = toy.expect(ERROR)
    assert (body["id"], body["kind"]) == (queued, "aborted")


def test_abort_of_a_running_plain_call_still_sends_its_result(toy):
    call_id = next(_ids)
    toy.call(call_id, "sleep", 0.4)
    time.sleep(0.1)
    toy.send_control(ABORT, {"id": call_id})
    assert toy.expect(RESULT) == {"id": call_id, "value": "slept"}


def test_abort_stops_a_running_plain_call_that_checks_between_its_steps(toy):
    # An hour of audio, say: the engine asks stop_if_aborted between its pieces.
    call_id = next(_ids)
    started = time.monotonic()
    toy.call(call_id, "steps", 200, 0.05)
    time.sleep(0.2)
    toy.send_control(ABORT, {"id": call_id})
    body = toy.expect(ERROR)
    assert (body["id"], body["kind"]) == (call_id, "aborted")
    assert time.monotonic() - started < 5  # not the 10 s its steps take
    assert toy.ask(next(_ids), "steps", 2, 0.01) == (RESULT, {"id": next(_ids) - 1, "value": "done"})


def test_abort_of_an_unknown_id_does_nothing(toy):
    toy.send_control(ABORT, {"id": 10**9})
    assert toy.nothing_within(0.3)
    assert toy.nothing_within(0.1, toy.control)
    assert toy.ask(next(_ids), "echo", 2)[1]["value"] == 2


def test_ping_is_answered_while_a_call_runs(toy):
    call_id = next(_ids)
    toy.call(call_id, "sleep", 1.5)
    time.sleep(0.2)
    sent = time.monotonic()
    toy.send_control(PING, {"ts": 1700000000123})
    assert without_stats(toy.recv_control(timeout=1.0)) == (PONG, {"ts": 1700000000123})
    assert time.monotonic() - sent < 0.5
    assert toy.expect(RESULT, timeout=5) == {"id": call_id, "value": "slept"}


def test_calls_run_one_at_a_time_in_order(toy):
    ids = [next(_ids) for _ in range(20)]
    for n, call_id in enumerate(ids):
        toy.call(call_id, "echo", n)
    answers = [toy.expect(RESULT) for _ in ids]
    assert answers == [{"id": call_id, "value": n} for n, call_id in enumerate(ids)]


def test_user_print_goes_to_stderr_not_stdout(toy):
    assert "toy launcher loaded" in toy.stderr()
    assert toy.stdout() == b""
    # and every log line carries the replica uid
    log_lines = [line for line in toy.stderr().splitlines() if "hangar_runtime" in line]
    assert log_lines and all(line.startswith("[toy-0] ") for line in log_lines)


def test_abort_that_overtakes_its_call_still_drops_it(toy):
    # ABORT and CALL use different sockets, so the ABORT may be read first.
    call_id = next(_ids)
    toy.send_control(ABORT, {"id": call_id})
    toy.send_control(PING, {"ts": 1})
    assert without_stats(toy.recv_control()) == (PONG, {"ts": 1})  # the ABORT has been handled
    msg_type, body = toy.ask(call_id, "echo", "late")
    assert (msg_type, body["kind"]) == (ERROR, "aborted")
