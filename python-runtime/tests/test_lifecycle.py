"""Process lifecycle: command line, handshake, heartbeat, shutdown and exit codes."""

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import (END, HELLO, LOAD, LOAD_FAILED, PING, PONG, READY, RESULT, RUNTIME_DIR, SHUTDOWN, frame,
                     load_spec, without_stats)

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


TOY = str(Path(__file__).parent / "launchers" / "toy.py")


def test_hello_then_pong_from_both_sockets(spawn):
    runtime = spawn("llama-7b-1")  # the harness checks the routing id of every message
    msg_type, hello = runtime.recv()
    assert msg_type == HELLO
    assert hello["protocol"] == 3 and hello["replica"] == "llama-7b-1"
    assert hello["pid"] == runtime.process.pid
    assert hello["python"] == "%d.%d.%d" % sys.version_info[:3]
    runtime.send_control(PING, {"ts": 42})
    msg_type, pong = runtime.recv_control()
    assert msg_type == PONG and pong["ts"] == 42
    # The stats ride on every PONG (docs/runtime-protocol.md, "Stats").
    stats = pong["stats"]
    assert stats["queue_depth"] == 0 and stats["batch_size"] == 0 and stats["batch_steps"] == 0
    assert stats["rss_bytes"] > 10 * 1024 * 1024  # a Python process with zmq loaded


@pytest.mark.parametrize("args, fragment", [
    ([], "required"),
    (["--data", "ipc:///tmp/x.d", "--control", "ipc:///tmp/x.c"], "--replica"),
    (["--data", "no-scheme", "--control", "ipc:///tmp/x.c", "--replica", "r-0"], "no-scheme"),
    (["--data", "ipc:///tmp/x.d", "--control", "ipc:///tmp/x.c", "--replica", ""], "--replica"),
    (["--data", "ipc:///tmp/x.d", "--control", "ipc:///tmp/x.c", "--replica", "r" * 256], "--replica"),
    # zmq routing ids end at 255 bytes, and the writer's id adds "/out".
    (["--data", "ipc:///tmp/x.d", "--control", "ipc:///tmp/x.c", "--replica", "r" * 252], "at most 251 bytes"),
    (["--data", "ipc:///tmp/x.d", "--control", "ipc:///tmp/x.c", "--replica", "r-0", "--parent-pid", "-3"], "--parent-pid"),
    (["--data", "ipc:///tmp/x.d", "--control", "ipc:///tmp/x.c", "--replica", "r-0", "--heartbeat-timeout", "0"], "--heartbeat-timeout"),
    (["--data", "ipc:///tmp/x.d", "--control", "ipc:///tmp/x.c", "--replica", "r-0", "--heartbeat-timeout", "soon"], "--heartbeat-timeout"),
])
def test_bad_command_line_exits_2(args, fragment):
    done = subprocess.run([sys.executable, "-m", "hangar_runtime", *args], cwd=RUNTIME_DIR,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert fragment in done.stderr and "error" in done.stderr
    assert done.stdout == ""


def test_data_messages_come_from_the_work_loops_own_writer_socket(spawn):
    """Protocol v3: HELLO and PONG come from the I/O thread's DEALERs (the replica's
    routing id); everything the work loop sends on data comes from its writer, routing
    id `<replica>/out`, so no token waits for the I/O thread."""
    runtime = spawn("toy-0")
    runtime.hello()
    assert runtime.last_sender == b"toy-0"
    runtime.load_ok(load_spec("python", TOY))
    assert runtime.last_sender == b"toy-0/out"
    values, end_type, _ = runtime.stream(1, "count", 3)
    assert values == [0, 1, 2] and end_type == END and runtime.last_sender == b"toy-0/out"
    runtime.send_control(PING, {"ts": 7})
    assert runtime.recv_control()[0] == PONG and runtime.last_sender == b"toy-0"


def _nice_by_thread(pid: int) -> dict[int, int]:
    """Each thread's nice value: field 19 of /proc/<pid>/task/<tid>/stat."""
    nice = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as fh:
            nice[int(tid)] = int(fh.read().rsplit(") ", 1)[1].split()[16])
    return nice


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "SCHED_IDLE"), reason="needs Linux")
@pytest.mark.parametrize("nice_setting, policy_setting, gpus, lowered, policy", [
    (None, None, "", 10, "idle"), ("0", None, "", 0, "idle"), ("3", "normal", "", 3, "normal"),
    ("soon", "lazy", "", 10, "idle"), (None, "NORMAL", "", 10, "normal"),
    # A runtime given GPUs keeps its priority unless told otherwise.
    (None, None, "0", 0, "normal"), ("5", "idle", "0,1", 5, "idle"),
])
def test_the_work_loop_computes_at_a_lower_cpu_priority_than_the_relaying_threads(spawn, nice_setting, policy_setting, gpus, lowered, policy):
    """HANGAR_RUNTIME_COMPUTE_NICE (default 10 without GPUs, 0 with) and
    HANGAR_RUNTIME_COMPUTE_POLICY (default SCHED_IDLE without GPUs) lower the work
    loop's thread and what it starts; the I/O thread, zmq's and the watchdog keep the
    runtime's own priority and policy."""
    # An empty value is an unset one: the runtime's default applies, whatever the
    # environment pytest runs in says (npm test runs it with a normal priority).
    env = {"CUDA_VISIBLE_DEVICES": gpus,
           "HANGAR_RUNTIME_COMPUTE_NICE": "" if nice_setting is None else nice_setting,
           "HANGAR_RUNTIME_COMPUTE_POLICY": "" if policy_setting is None else policy_setting}
    runtime = spawn(env=env)
    runtime.hello()
    runtime.load_ok(load_spec("python", TOY))
    assert runtime.ask(1, "echo", "x")[0] == RESULT  # the work loop is running
    pid = runtime.process.pid
    base = os.getpriority(os.PRIO_PROCESS, 0)  # the runtime started with ours
    base_policy = os.sched_getscheduler(0)
    nice = _nice_by_thread(pid)
    policies = {tid: os.sched_getscheduler(tid) for tid in nice}
    assert nice.pop(pid) == min(19, base + lowered), "the main thread runs the work loop"
    assert policies.pop(pid) == (os.SCHED_IDLE if policy == "idle" else base_policy)
    # The I/O thread, the watchdog, zmq's I/O and reaper threads (Python names no thread
    # for /proc, so they are counted, not named).
    assert sum(1 for tid, value in nice.items() if value == base and policies[tid] == base_policy) >= 4, (nice, policies)
    if nice_setting == "soon":
        assert "HANGAR_RUNTIME_COMPUTE_NICE='soon' is not an integer" in runtime.stderr()
    if policy_setting == "lazy":
        assert "HANGAR_RUNTIME_COMPUTE_POLICY='lazy' is not one of idle, normal" in runtime.stderr()
    assert f"the work loop computes at nice +{lowered}, {policy} policy" in runtime.stderr()


@pytest.mark.parametrize("env, replicas, preload, expected", [
    # The default: the cores this process may use, shared by the model's replicas.
    ({}, 1, "", "auto"),
    ({}, 64, "", "auto"),
    ({}, 2, "torch", "auto"),
    ({"HANGAR_RUNTIME_CPU_THREADS": "3"}, 1, "torch", 3),
    ({"HANGAR_RUNTIME_CPU_THREADS": "many"}, 1, "", "auto"),
    # Left alone: told so, the operator's own OMP_NUM_THREADS, or a runtime given GPUs.
    ({"HANGAR_RUNTIME_CPU_THREADS": "0"}, 1, "torch", None),
    ({"OMP_NUM_THREADS": "2"}, 1, "", "2"),
    ({"CUDA_VISIBLE_DEVICES": "0"}, 1, "", None),
])
def test_a_runtime_without_gpus_sizes_its_compute_pools_to_its_share_of_the_cores(spawn, monkeypatch, env, replicas, preload, expected):
    """OpenMP pools sized to every core collapse when anything else wants one
    (compute_threads.py): the runtime sets OMP_NUM_THREADS for what it imports and
    resizes torch's pool when a warm spare imported torch already."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("HANGAR_RUNTIME_CPU_THREADS", raising=False)
    runtime = spawn(env={"CUDA_VISIBLE_DEVICES": "", **env}, extra_args=("--preload", preload) if preload else ())
    runtime.hello()
    runtime.load_ok(load_spec("python", TOY, replicas=replicas))
    msg_type, body = runtime.ask(1, "threads")
    assert msg_type == RESULT
    cores = len(os.sched_getaffinity(runtime.process.pid))
    if expected == "auto":
        threads = max(1, cores // replicas)
        assert body["value"]["omp"] == str(threads)
        if preload:
            assert body["value"]["torch"] == threads
    elif expected is None:
        assert body["value"]["omp"] is None
        if preload:
            assert body["value"]["torch"] == cores  # torch's own default
    elif isinstance(expected, int):
        assert body["value"] == {"omp": str(expected), "torch": expected}
    else:
        assert body["value"]["omp"] == expected  # the operator's setting, untouched
    if env.get("HANGAR_RUNTIME_CPU_THREADS") == "many":
        assert "HANGAR_RUNTIME_CPU_THREADS='many' is not a count of threads" in runtime.stderr()


def test_unknown_engine_fails_load_and_exits_3(spawn):
    runtime = spawn()
    runtime.hello()
    _, msg_type, body = runtime.load(load_spec("tensorflow", TOY))
    assert (msg_type, body) == (LOAD_FAILED, {"kind": "invalid", "message": "Unknown engine: tensorflow"})
    assert runtime.wait_exit() == 3


def test_shutdown_before_load_exits_0(spawn):
    runtime = spawn()
    runtime.hello()
    runtime.send_control(SHUTDOWN, {})
    assert runtime.wait_exit(timeout=5) == 0


def test_preload_imports_before_the_load_and_skips_missing_modules(spawn):
    # A warm spare: it imports while no LOAD has come yet, and a LOAD sent during the
    # imports waits in the inbox. A missing module is logged, not fatal.
    runtime = spawn(extra_args=("--preload", "json,no_such_module_xyz, sklearn"))
    runtime.hello()
    runtime.load_ok(load_spec("python", TOY))
    runtime.send_control(SHUTDOWN, {})
    assert runtime.wait_exit(timeout=5) == 0
    err = runtime.stderr_path.read_text()
    assert "preload of no_such_module_xyz skipped" in err
    assert "preloaded json, no_such_module_xyz, sklearn" in err


def test_queue_depth_counts_calls_not_yet_answered(spawn):
    runtime = spawn()
    runtime.hello()
    runtime.load_ok(load_spec("python", TOY))
    # One call sleeps in the engine, two wait behind it: three held, then none.
    runtime.call(1, "sleep", 0.5)
    runtime.call(2, "echo", "a")
    runtime.call(3, "raise", "ValueError", "bad")
    time.sleep(0.2)
    runtime.send_control(PING, {"ts": 1})
    assert runtime.recv_control()[1]["stats"]["queue_depth"] == 3
    assert sorted(runtime.recv()[1]["id"] for _ in range(3)) == [1, 2, 3]
    runtime.send_control(PING, {"ts": 2})
    assert runtime.recv_control()[1]["stats"]["queue_depth"] == 0


def test_shutdown_after_ready_exits_0_within_2s(spawn):
    runtime = spawn()
    runtime.hello()
    runtime.load_ok(load_spec("python", TOY))
    sent = time.monotonic()
    runtime.send_control(SHUTDOWN, {})
    assert runtime.wait_exit(timeout=5) == 0
    assert time.monotonic() - sent < 2.0
    assert runtime.stdout() == b""


def test_malformed_messages_are_ignored(spawn):
    runtime = spawn()
    runtime.hello()
    for garbage in ([b""], [b"\x10\xc1"], [b"\x10\x93\x01\x02\x03"], [frame(0x7f, {})],
                    [frame(PING, {"ts": 1}), b"second frame"]):
        runtime.data.send_multipart([runtime.identity, *garbage])
        runtime.control.send_multipart([runtime.identity, *garbage])
    runtime.send_control(PING, {"ts": 5})
    assert without_stats(runtime.recv_control()) == (PONG, {"ts": 5})
    runtime.load_ok(load_spec("python", TOY))
    assert runtime.process.poll() is None


def test_no_ping_for_the_timeout_exits_4(spawn):
    runtime = spawn(heartbeat_timeout=1.0)
    runtime.hello()
    started = time.monotonic()
    assert runtime.wait_exit(timeout=10) == 4
    assert 0.9 < time.monotonic() - started < 2.5
    assert "no PING" in runtime.stderr()


def test_heartbeat_timeout_exits_even_during_a_stuck_load(spawn):
    runtime = spawn(heartbeat_timeout=1.0)
    runtime.hello()
    started = time.monotonic()
    runtime.send(LOAD, load_spec("python", TOY, launcher_args={"sleep": 60}))
    assert runtime.wait_exit(timeout=10) == 4
    assert time.monotonic() - started < 2.5


def test_pings_keep_it_alive_until_they_stop(spawn):
    runtime = spawn(heartbeat_timeout=1.0)
    runtime.hello()
    runtime.send(LOAD, load_spec("python", TOY))
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline:
        runtime.send_control(PING, {"ts": 0})
        assert runtime.recv_control(timeout=1.0)[0] == PONG
        time.sleep(0.25)
    assert runtime.process.poll() is None
    assert runtime.finish_load()[1] == READY
    stopped = time.monotonic()
    assert runtime.wait_exit(timeout=10) == 4
    assert time.monotonic() - stopped < 2.5


def test_matching_parent_pid_keeps_it_alive(spawn):
    runtime = spawn(extra_args=["--parent-pid", str(os.getpid())])
    runtime.hello()
    time.sleep(1.2)  # more than two watchdog checks
    assert runtime.process.poll() is None


@pytest.mark.skipif(os.getpid() == 1, reason="needs a parent pid that is not ours")
def test_wrong_parent_pid_exits_4(spawn):
    runtime = spawn(extra_args=["--parent-pid", "1"])
    assert runtime.wait_exit(timeout=10) == 4


PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture
def subreaper():
    """Makes this process adopt orphaned descendants, so the exit code of a
    runtime whose parent was killed can still be collected with waitpid."""
    if not sys.platform.startswith("linux"):
        pytest.skip("needs Linux prctl")
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def test_parent_death_exits_4_within_a_second(spawn, subreaper):
    # `sh` plays the control plane process: the runtime is its child and gets its pid.
    runtime = spawn(wrap=lambda argv: ["sh", "-c", '"$@" --parent-pid $$ & wait', "sh", *argv])
    hello = runtime.hello()
    runtime_pid = hello["pid"]
    assert runtime_pid != runtime.process.pid
    time.sleep(0.6)  # the watchdog has checked at least once and found its parent
    os.kill(runtime.process.pid, signal.SIGKILL)
    runtime.process.wait(5)
    killed = time.monotonic()
    deadline = killed + 5
    while True:
        pid, status = os.waitpid(runtime_pid, os.WNOHANG)
        if pid:
            break
        assert time.monotonic() < deadline, "runtime did not exit after its parent died"
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(status) == 4
    assert time.monotonic() - killed < 1.2


@pytest.mark.parametrize("flag", [True, False])
def test_a_runtime_asked_to_lead_its_own_process_group_in_its_callers_session(spawn, flag):
    """--process-group (the control plane passes it): a group the control plane can end
    as a whole, but not a new session, which Linux would schedule as a separate
    autogroup (compute_priority.py). Without the flag it stays in its caller's group."""
    runtime = spawn(extra_args=("--process-group",) if flag else ())
    runtime.hello()
    pid = runtime.process.pid
    assert os.getsid(pid) == os.getsid(0)
    assert os.getpgid(pid) == (pid if flag else os.getpgid(0))
