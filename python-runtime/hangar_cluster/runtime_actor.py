"""The Ray actor behind one replica: it starts the ordinary runtime process
(python -m hangar_runtime, or the Node runtime of the llama.cpp engine) on its node
and lives exactly as long as it.

The runtime is a child process, not code run inside the actor, so it is the same
program as in local mode (same exit codes, same signal handling), and its
--parent-pid check makes it exit when Ray kills the actor or the node's worker."""

import os
import shutil
import signal
import socket
import subprocess
import sys

import ray


class RuntimeActor:
    def __init__(self):
        self._process: subprocess.Popen | None = None

    def start(self, runtime_root: str, args: list[str], env: dict[str, str], cpu_only: bool,
              command: list[str] | None = None) -> dict:
        """command: the program and its first arguments when the replica's runtime is not
        the Python one (the control plane sends Node and the Node runtime's entry, paths
        that are the same on every node of an image-based cluster); absent: Python."""
        child_env = {**os.environ, **env, "PYTHONPATH": runtime_root, "PYTHONUNBUFFERED": "1"}
        if cpu_only:
            # As in local mode: a CPU replica must not grab a GPU by accident. With
            # num_gpus > 0 Ray has already set CUDA_VISIBLE_DEVICES to the GPUs it gave us.
            child_env["CUDA_VISIBLE_DEVICES"] = ""
        if command:
            program = command[0] if os.path.exists(command[0]) else (shutil.which(os.path.basename(command[0])) or command[0])
            argv = [program, *command[1:], *args, "--parent-pid", str(os.getpid())]
        else:
            argv = [sys.executable, "-m", "hangar_runtime", *args, "--parent-pid", str(os.getpid())]
        # stdout/stderr are the actor's: Ray keeps them in the node's logs and streams
        # them to the agent, which forwards them to the control plane's log.
        self._process = subprocess.Popen(argv, cwd=runtime_root, env=child_env, stdin=subprocess.DEVNULL)
        context = ray.get_runtime_context()
        return {"node_id": context.get_node_id(), "node_ip": ray.util.get_node_ip_address(),
                "hostname": socket.gethostname(), "pid": self._process.pid,
                "gpu_ids": [str(g) for g in ray.get_gpu_ids()]}

    def wait(self) -> int:
        """Returns the runtime's exit code once it has exited (the agent waits on this)."""
        return self._process.wait() if self._process else 0

    def stop(self, grace_s: float) -> int:
        """SIGTERM, wait, SIGKILL: the last steps of the control plane's stop escalation."""
        proc = self._process
        if proc is None or proc.poll() is not None:
            return proc.returncode if proc else 0
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
