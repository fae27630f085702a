"""Plays the control plane in end-to-end tests: binds the two ROUTER sockets,
spawns a real runtime process and speaks the wire protocol to it.

Message numbers are copied from docs/runtime-protocol.md rather than imported
from hangar_runtime, so the tests check the runtime against the doc."""

import collections
import os
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import zmq

RUNTIME_DIR = Path(__file__).resolve().parents[1]

HELLO, LOAD, PROGRESS, READY, LOAD_FAILED = 0x01, 0x02, 0x03, 0x04, 0x05
CALL, RESULT, CHUNK, END, ERROR = 0x10, 0x11, 0x12, 0x13, 0x14
PING, PONG, ABORT, SHUTDOWN, DEAD = 0x20, 0x21, 0x22, 0x23, 0x24
BATCH = 0x15  # protocol v2: many calls' messages in one frame

DEFAULT_TIMEOUT_S = 10.0


def frame(msg_type: int, body: dict) -> bytes:
    return bytes([msg_type]) + msgpack.packb(body, use_bin_type=True)


class Runtime:
    """One runtime process and the control-plane end of its two sockets."""

    def __init__(self, workdir: Path, replica: str, *, heartbeat_timeout: float = 60.0,
                 extra_args=(), wrap=None, env: dict | None = None):
        self.replica = replica
        self.identity = replica.encode()
        # v3: the work loop's own DEALER sends the data messages (docs/runtime-protocol.md).
        self.writer_identity = replica.encode() + b"/out"
        self._ctx = zmq.Context()
        # Messages unpacked from a BATCH frame, handed out one by one by recv().
        self._unpacked: collections.deque = collections.deque()
        self.batch_frames = 0  # BATCH frames received, for tests of the batching itself
        self.last_sender: bytes | None = None  # routing id of the last message recv() returned
        self.data = self._router(f"ipc://{workdir}/{replica}.data")
        self.control = self._router(f"ipc://{workdir}/{replica}.ctl")
        argv = [sys.executable, "-m", "hangar_runtime",
                "--data", f"ipc://{workdir}/{replica}.data",
                "--control", f"ipc://{workdir}/{replica}.ctl",
                "--replica", replica, "--heartbeat-timeout", str(heartbeat_timeout), *extra_args]
        if wrap is not None:
            argv = wrap(argv)
        self.stdout_path = workdir / f"{replica}.stdout"
        self.stderr_path = workdir / f"{replica}.stderr"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(argv, cwd=RUNTIME_DIR, stdout=out, stderr=err,
                                            env=None if env is None else {**os.environ, **env})

    def _router(self, endpoint: str) -> zmq.Socket:
        sock = self._ctx.socket(zmq.ROUTER)
        sock.linger = 0
        # Fail loudly instead of silently dropping a message to a peer not yet there.
        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
        sock.bind(endpoint)
        return sock

    # ---- wire ----

    def send(self, msg_type: int, body: dict, sock: zmq.Socket | None = None) -> None:
        sock = self.data if sock is None else sock
        deadline = time.monotonic() + 3.0
        while True:
            try:
                sock.send_multipart([self.identity, frame(msg_type, body)])
                return
            except zmq.ZMQError as exc:  # EHOSTUNREACH until the runtime has connected
                if exc.errno != zmq.EHOSTUNREACH or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def send_control(self, msg_type: int, body: dict) -> None:
        self.send(msg_type, body, self.control)

    def recv(self, sock: zmq.Socket | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> tuple[int, dict]:
        sock = self.data if sock is None else sock
        if sock is self.data and self._unpacked:
            return self._unpacked.popleft()
        if not sock.poll(int(timeout * 1000)):
            raise AssertionError(f"no message within {timeout}s; runtime stderr:\n{self.stderr()}")
        parts = sock.recv_multipart()
        assert len(parts) == 2, f"expected routing id + one frame, got {len(parts)} parts"
        expected = (self.identity, self.writer_identity) if sock is self.data else (self.identity,)
        assert parts[0] in expected, f"routing id {parts[0]!r}, expected one of {expected!r}"
        self.last_sender = parts[0]
        body = msgpack.unpackb(parts[1][1:], raw=False)
        assert isinstance(body, dict)
        if parts[1][0] == BATCH:
            self.batch_frames += 1
            assert len(body["items"]) > 1, "a BATCH frame carries at least two messages"
            self._unpacked.extend((t, b) for t, b in body["items"])
            return self._unpacked.popleft()
        return parts[1][0], body

    def recv_control(self, timeout: float = DEFAULT_TIMEOUT_S) -> tuple[int, dict]:
        return self.recv(self.control, timeout)

    def expect(self, msg_type: int, sock: zmq.Socket | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> dict:
        got, body = self.recv(sock, timeout)
        assert got == msg_type, f"expected type 0x{msg_type:02x}, got 0x{got:02x} {body}"
        return body

    def nothing_within(self, seconds: float, sock: zmq.Socket | None = None) -> bool:
        sock = self.data if sock is None else sock
        if sock is self.data and self._unpacked:
            return False
        return not sock.poll(int(seconds * 1000))

    # ---- protocol steps ----

    def hello(self) -> dict:
        return self.expect(HELLO)

    def load(self, spec: dict) -> tuple[list[dict], int, dict]:
        """Sends LOAD; returns the PROGRESS bodies, then the final type and body."""
        self.send(LOAD, spec)
        return self.finish_load()

    def finish_load(self) -> tuple[list[dict], int, dict]:
        progress = []
        while True:
            msg_type, body = self.recv(timeout=30)
            if msg_type != PROGRESS:
                return progress, msg_type, body
            progress.append(body)

    def load_ok(self, spec: dict) -> dict:
        _, msg_type, body = self.load(spec)
        assert msg_type == READY, f"expected READY, got 0x{msg_type:02x} {body}\n{self.stderr()}"
        return body

    def call(self, call_id: int, *args, engine_method: str = "infer", stream: bool = False, **kwargs) -> None:
        self.send(CALL, {"id": call_id, "method": engine_method, "args": list(args), "kwargs": kwargs, "stream": stream})

    def ask(self, call_id: int, *args, **kwargs) -> tuple[int, dict]:
        """A non-stream call and its one answer."""
        self.call(call_id, *args, **kwargs)
        msg_type, body = self.recv()
        assert body.get("id") == call_id, body
        return msg_type, body

    def stream(self, call_id: int, *args, **kwargs) -> tuple[list, int, dict]:
        """A stream call: its CHUNK values, then the closing type and body."""
        self.call(call_id, *args, stream=True, **kwargs)
        values = []
        while True:
            msg_type, body = self.recv()
            assert body.get("id") == call_id, body
            if msg_type != CHUNK:
                return values, msg_type, body
            values.append(body["value"])

    # ---- process ----

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT_S) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"runtime still running after {timeout}s; stderr:\n{self.stderr()}") from None

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stdout(self) -> bytes:
        return self.stdout_path.read_bytes()

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(5)
        finally:
            # Always: a context left with open sockets blocks whoever collects it.
            self.data.close()
            self.control.close()
            self._ctx.term()


def load_spec(engine: str, model_uri: str, **extra) -> dict:
    spec = {"model_type": "flexible", "model_name": "test-model", "model_uid": "test-model",
            "replica_uid": "test-model-0", "engine": engine, "model_uri": model_uri,
            "launcher_args": {}, "engine_kwargs": {}}
    spec.update(extra)
    return spec



def without_stats(message: tuple[int, dict]) -> tuple[int, dict]:
    """A PONG without the `stats` it carries (whose values change), for exact comparisons."""
    msg_type, body = message
    return msg_type, {k: v for k, v in body.items() if k != "stats"}
