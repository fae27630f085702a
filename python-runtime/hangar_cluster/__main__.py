"""python -m hangar_cluster --address ADDRESS --runtime-root DIR

The cluster agent: started by the control plane in cluster mode, it is a Ray
driver that starts one actor per replica and reports on them. It speaks JSON
lines (docs/cluster.md): requests on stdin, answers and events on stdout. Its
own logs, and the runtime logs Ray streams back, go to stderr."""

import argparse
import logging
import os
import signal
import sys

from .protocol_out import fatal, ready

INSTALL_HINT = ("Ray is not installed in the runtime's Python environment; install it with "
                "`python-runtime/.venv/bin/pip install -r python-runtime/requirements-cluster.txt`")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hangar_cluster")
    parser.add_argument("--address", required=True,
                        help="ray://host:port (Ray Client), host:port (GCS of a cluster this host is in), or auto")
    parser.add_argument("--runtime-root", required=True, help="folder holding hangar_runtime, the same on every node")
    parser.add_argument("--placement-timeout", type=float, default=60.0, metavar="SECONDS")
    args = parser.parse_args(argv)

    # stdout is the protocol: keep a private handle on it and point fd 1 at stderr, so
    # nothing else (Ray's log streaming, a library's print) can write into it.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s hangar_cluster: %(message)s")

    try:
        import ray
    except ImportError:
        fatal(out, INSTALL_HINT)
        return 3
    try:
        # Never start a cluster of our own: only join the one we were given.
        ray.init(address=args.address, namespace="hangar", log_to_driver=True, logging_level=logging.WARNING)
    except Exception as exc:
        fatal(out, f"could not join the Ray cluster at {args.address}: {type(exc).__name__}: {exc}")
        return 3

    # Ctrl-C reaches the whole process group; the control plane stops us itself
    # (it closes our stdin) after stopping its models, which needs us until then.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .agent import Agent  # imports Ray, so only once Ray is known to be there
    # The actor class and the node query run on the cluster's workers, which need not
    # have this package on their path (a Ray Client driver's never do): ship it by value.
    import hangar_cluster
    from ray import cloudpickle
    cloudpickle.register_pickle_by_value(hangar_cluster)
    agent = Agent(out, args.runtime_root, args.placement_timeout)
    ready(out, ray.__version__, ray.util.get_node_ip_address())
    try:
        agent.serve(sys.stdin)
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)
