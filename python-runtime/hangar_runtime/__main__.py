"""Entry point: python -m hangar_runtime --data EP --control EP --replica UID [...]

Wires the I/O thread, the watchdog and the work loop together, and turns their
outcome into the exit codes of docs/runtime-protocol.md."""

import argparse
import importlib
import logging
import math
import os
import queue
import signal
import sys
import time

import zmq

from . import exit_codes
from .aborts import AbortRegistry
from .curve_keys import BadCurveKeys, take_from_environment
from .io_thread import BadEndpoint, IOThread
from .logging_setup import setup_logging
from .process_group import lead_own_group
from .outbox import WRITER_SUFFIX, Outbox
from .runtime_stats import RuntimeStats
from .watchdog import Heartbeat, Watchdog
from .work_loop import WorkLoop

log = logging.getLogger("hangar_runtime")

# After LOAD_FAILED or DEAD the process exits at once; this long the last message
# may still be on its way out. Bounded, so a vanished control plane cannot hold us.
_FINAL_MESSAGE_LINGER_MS = 1000
_IO_JOIN_TIMEOUT_S = 3.0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hangar_runtime",
        description="Hangar model runtime: serves one model replica to the control plane over ZeroMQ.")
    parser.add_argument("--data", required=True, metavar="ENDPOINT", help="data socket endpoint (ipc:// or tcp://)")
    parser.add_argument("--control", required=True, metavar="ENDPOINT", help="control socket endpoint")
    parser.add_argument("--replica", required=True, metavar="UID", help="replica uid, also the socket routing id (the work loop's writer adds /out)")
    parser.add_argument("--parent-pid", type=int, default=0, metavar="PID",
                        help="exit when the parent pid is no longer this (0: no check)")
    parser.add_argument("--heartbeat-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="exit when no PING arrives for this long (default 10)")
    parser.add_argument("--process-group", action="store_true",
                        help="lead a new process group, which the control plane ends as a whole (an "
                             "engine's own processes with it)")
    parser.add_argument("--preload", default="", metavar="MODULES",
                        help="comma-separated modules to import before the LOAD is read (a warm spare "
                             "pays torch's import while no one waits for it); missing ones are skipped")
    return parser


def parse_args(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    # parser.error prints usage and the message to stderr and exits with code 2.
    args = parser.parse_args(argv)
    if not args.replica:
        parser.error("--replica must not be empty")
    # It becomes the zmq routing id, which must be 1..255 bytes and must not start
    # with a zero byte (zmq reserves those for ids it makes up itself).
    # zmq routing ids are at most 255 bytes, and the writer's is the replica's plus "/out".
    if len(args.replica.encode("utf-8")) > 255 - len(WRITER_SUFFIX) or args.replica.startswith("\0"):
        parser.error(f"--replica must be at most {255 - len(WRITER_SUFFIX)} bytes of UTF-8 and not start with a NUL")
    if not args.data or not args.control:
        parser.error("--data and --control must not be empty")
    if args.parent_pid < 0:
        parser.error(f"--parent-pid must be 0 or a pid, got {args.parent_pid}")
    if not (math.isfinite(args.heartbeat_timeout) and args.heartbeat_timeout > 0):
        parser.error(f"--heartbeat-timeout must be a positive number of seconds, got {args.heartbeat_timeout}")
    return args


_SWITCH_INTERVAL_S = 0.0005


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_args(parser, argv)
    if args.process_group:  # first: whatever starts from here on is in the group
        lead_own_group()
    # First, before any user code runs: the keys leave the environment here.
    try:
        curve = take_from_environment()
    except BadCurveKeys as exc:
        parser.error(str(exc))
    # A user's print() must never reach the control plane's stdout pipe as if it
    # were ours; stderr is where it forwards lines from anyway.
    sys.stdout = sys.stderr
    # Ctrl-C in a terminal reaches the whole process group; the control plane
    # then shuts replicas down itself (SHUTDOWN, then SIGTERM), and if it dies
    # instead, the watchdog notices. A KeyboardInterrupt here would only turn an
    # orderly stop into a spurious DEAD.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The I/O thread relays every message between the sockets and the work loop; while
    # the work loop runs Python it gets the GIL only when the interpreter forces a
    # switch (every 5 ms by default), a wait that lands on the time to first token.
    # A shorter interval hands the GIL over sooner (docs/performance.md, TTFT).
    sys.setswitchinterval(_SWITCH_INTERVAL_S)
    setup_logging(args.replica)

    ctx = zmq.Context()
    inbox: queue.Queue = queue.Queue()
    aborts = AbortRegistry()
    heartbeat = Heartbeat()
    stats = RuntimeStats()
    try:
        io = IOThread(ctx, args.data, args.control, args.replica, inbox, aborts, heartbeat, stats, curve)
    except BadEndpoint as exc:
        ctx.term()
        parser.error(str(exc))

    Watchdog(heartbeat, args.heartbeat_timeout, args.parent_pid).start()
    outbox = Outbox(ctx, io.stopping, args.data, args.replica, curve)
    io.start()
    log.info("runtime started (pid %d)", os.getpid())
    preload(args.preload)

    code = WorkLoop(inbox, outbox, aborts, io.stopping, stats).run()

    linger = 0 if code == exit_codes.SHUTDOWN else _FINAL_MESSAGE_LINGER_MS
    outbox.stop(linger)
    io.join(_IO_JOIN_TIMEOUT_S)
    outbox.close(linger)
    if not io.is_alive():
        ctx.term()  # waits (up to the linger) for a last LOAD_FAILED or DEAD to go out
    log.info("exiting with code %d", code)
    return code


def preload(modules: str) -> None:
    """Imports what a load would import anyway. The I/O thread already answers PINGs
    and queues a LOAD that arrives meanwhile, so the only cost of a slow import here
    is the wait it would have been anyway."""
    names = [m.strip() for m in modules.split(",") if m.strip()]
    if not names:
        return
    started = time.monotonic()
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # a missing optional library only makes the spare less warm
            log.info("preload of %s skipped: %s", name, exc)
    log.info("preloaded %s in %.2fs", ", ".join(names), time.monotonic() - started)


if __name__ == "__main__":
    exit_code = main()
    sys.stderr.flush()
    # os._exit, not sys.exit: a user's launcher may have started non-daemon threads,
    # and a normal interpreter exit would wait for them forever.
    os._exit(exit_code)
