"""A real two-node Ray cluster on loopback for the cluster-mode tests.

Ray refuses `ray start --address` for a second node while RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0,
and without that setting it moves every node off loopback. Ray's own multi-node test
helper (ray.cluster_utils.Cluster) starts the same processes as `ray start` (a GCS,
one raylet per node, their workers) with loopback addresses, so the tests use it.

Usage: ray_cluster.py <client server port>. Prints {"address": ..., "client_address":
..., "second_node_id": ...} once both nodes are up, then reads
commands on stdin: `kill-second` (SIGKILL the second node's raylet: a machine lost),
`add-gpu-node` (a third node declaring 1 GPU to Ray, which schedules by what nodes
declare: a GPU host joining; prints {"added": <node id>}), `remove-gpu-node`,
`exit` (or end of input: shut everything down)."""

import json
import os
import sys

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
# The head's Ray Client proxy forks a server per client while gRPC threads run; with
# gRPC's default epoll engine the child sometimes aborts ("next_worker->state ==
# KICKED") and the client's join fails after 30 s. The poll engine does not.
os.environ["GRPC_POLL_STRATEGY"] = "poll"

from ray.cluster_utils import Cluster  # noqa: E402

OBJECT_STORE_BYTES = 80_000_000
# Notice a lost node in about 3 s instead of 15 s.
SYSTEM_CONFIG = {"health_check_initial_delay_ms": 1000, "health_check_period_ms": 1000,
                 "health_check_timeout_ms": 1000, "health_check_failure_threshold": 3}


def main() -> int:
    client_port = int(sys.argv[1])
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "object_store_memory": OBJECT_STORE_BYTES, "include_dashboard": False,
        "ray_client_server_port": client_port, "_system_config": SYSTEM_CONFIG})
    second = cluster.add_node(num_cpus=1, resources={"second_node": 1}, object_store_memory=OBJECT_STORE_BYTES)
    cluster.wait_for_nodes()
    print(json.dumps({"address": cluster.address, "client_address": f"ray://127.0.0.1:{client_port}",
                      "second_node_id": second.node_id}), flush=True)
    gpu_node = None
    try:
        for line in sys.stdin:
            command = line.strip()
            if command == "add-gpu-node":
                gpu_node = cluster.add_node(num_cpus=1, num_gpus=1, object_store_memory=OBJECT_STORE_BYTES)
                cluster.wait_for_nodes()
                print(json.dumps({"added": gpu_node.node_id}), flush=True)
            elif command == "remove-gpu-node" and gpu_node is not None:
                cluster.remove_node(gpu_node)
                gpu_node = None
                print(json.dumps({"removed": "gpu"}), flush=True)
            elif command == "kill-second":
                cluster.remove_node(second, allow_graceful=False)
                print(json.dumps({"killed": "second"}), flush=True)
            elif command == "exit":
                break
    finally:
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
