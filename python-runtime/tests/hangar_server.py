"""Starts the real server binary (``node bin/hangar.js start``) for the client tests,
as the TypeScript harness does (test/integration/harness/server.ts): loopback, a free
port, a fresh home folder. Needs dist/ built (``npm run setup``)."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0


class HangarServer:
    def __init__(self, args=(), env=None):
        """env: variables over the defaults (the hub offline), e.g. a stand-in hub's HF_ENDPOINT."""
        node = os.environ.get("HANGAR_TEST_NODE") or shutil.which("node")
        if not node:
            raise RuntimeError("node is not on PATH; the client tests start the real server binary")
        # Short: runtime sockets live under the home folder, and Unix socket paths are limited.
        self.home = tempfile.mkdtemp(prefix="hcl", dir="/tmp")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
        self.process = subprocess.Popen(
            [node, str(REPO_ROOT / "bin" / "hangar.js"), "start", "--host", "127.0.0.1", "--port", "0", "--home", self.home, *args],
            cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.logs = []
        self._listening = threading.Event()
        self.url = None
        # Reads every log line for the server's whole life: a full pipe would block it.
        threading.Thread(target=self._read, daemon=True).start()
        if not self._listening.wait(START_TIMEOUT_S) or self.url is None:
            self.stop()
            raise RuntimeError("the server did not start:\n" + "\n".join(self.logs[-20:]))

    def _read(self):
        for line in self.process.stdout:
            self.logs.append(line.rstrip("\n"))
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "hangar is listening":
                self.url = entry.get("url")
                self._listening.set()
        self._listening.set()

    def stop(self):
        """SIGTERM (the server stops every runtime), SIGKILL if it takes too long."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)
