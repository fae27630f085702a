"""Where a replica may go: Ray's live nodes, what each has free, and the
scheduling strategy for a launch (SPREAD by default, a node when pinned)."""

from dataclasses import dataclass

import ray
from ray._private import state as ray_state
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

_GIB = 1024 ** 3
# Ray's own bookkeeping resources, not something a user asks for.
_INTERNAL_PREFIXES = ("node:", "accelerator_type:")


class NoFit(Exception):
    """No live node can take the replica; the message says what was asked and what is free."""


@dataclass
class Ask:
    num_cpus: float
    num_gpus: float
    worker_ip: str | None

    def describe(self) -> str:
        where = f" on the node with address {self.worker_ip}" if self.worker_ip else ""
        return f"{_amount(self.num_cpus)} CPU and {_amount(self.num_gpus)} GPU{where}"


def nodes() -> list[dict]:
    """Every live node with its total and free CPUs, GPUs, memory and custom resources."""
    if ray.util.client.ray.is_connected():
        # Ray Client (ray://) has no state API: ask from inside the cluster, with a
        # task that takes no CPU, so it runs even on a full cluster.
        return ray.get(ray.remote(num_cpus=0)(_nodes_seen_from_the_cluster).remote())
    return _nodes_seen_from_the_cluster()


def _nodes_seen_from_the_cluster() -> list[dict]:
    free_by_node = ray_state.available_resources_per_node()
    out = []
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        total = node.get("Resources", {})
        free = free_by_node.get(node["NodeID"], {})
        out.append({
            "node_id": node["NodeID"],
            "address": node["NodeManagerAddress"],
            "hostname": node.get("NodeManagerHostname", ""),
            "is_head": "node:__internal_head__" in total,
            "total": _public(total),
            "free": _public(free),
        })
    return out


def _on(node: dict, worker_ip: str | None) -> bool:
    """Whether `worker_ip` (an address, or `<address>#<node id prefix>`, how /v1/workers
    names nodes sharing one) names this node; None names every node."""
    if not worker_ip:
        return True
    address, _, prefix = worker_ip.partition("#")
    return node["address"] == address and node["node_id"].startswith(prefix)


def strategy_for(ask: Ask, live: list[dict], held: list[Ask] = ()):
    """The scheduling strategy, or NoFit when no live node can hold the replica now.
    `held`: asks of replicas being placed, which Ray's free counts do not show yet;
    without them, the replicas of one launch were each checked against the same free
    CPUs, all passed, and the ones left over waited out the placement timeout instead
    of a quick NoFit. A hold pinned to other nodes than the candidates does not count."""
    candidates = [n for n in live if _on(n, ask.worker_ip)]
    if ask.worker_ip and not candidates:
        known = ", ".join(sorted({n["address"] for n in live})) or "none"
        raise NoFit(f"asked for {ask.describe()}, but no live Ray node has that address (nodes: {known})")
    fitting = [n for n in candidates if _fits(ask, n["free"])]
    if not fitting:
        raise NoFit(f"asked for {ask.describe()}; free: " + "; ".join(describe_free(n) for n in candidates))
    relevant = [h for h in held if any(_on(n, h.worker_ip) for n in candidates)]
    cpus, gpus = sum(h.num_cpus for h in relevant), sum(h.num_gpus for h in relevant)
    free_cpu = sum(n["free"].get("CPU", 0) for n in candidates) - cpus
    free_gpu = sum(n["free"].get("GPU", 0) for n in candidates) - gpus
    # Only what the ask uses: a GPU held elsewhere does not refuse a CPU replica.
    short = (ask.num_cpus > 0 and free_cpu < ask.num_cpus) or (ask.num_gpus > 0 and free_gpu < ask.num_gpus)
    if relevant and short:
        raise NoFit(f"asked for {ask.describe()}; {_amount(cpus)} CPU and {_amount(gpus)} GPU of what is free "
                    f"are held for replicas being placed; free: " + "; ".join(describe_free(n) for n in candidates))
    if ask.worker_ip:
        return NodeAffinitySchedulingStrategy(node_id=fitting[0]["node_id"], soft=False)
    # Replicas of one model land on different nodes while there are nodes to spare.
    return "SPREAD"


def _fits(ask: Ask, free: dict) -> bool:
    return free.get("CPU", 0) >= ask.num_cpus and free.get("GPU", 0) >= ask.num_gpus


def _public(resources: dict) -> dict:
    out = {"CPU": resources.get("CPU", 0.0), "GPU": resources.get("GPU", 0.0),
           "memory_bytes": int(resources.get("memory", 0)), "custom": {}}
    for name, value in resources.items():
        if name in ("CPU", "GPU", "memory", "object_store_memory") or name.startswith(_INTERNAL_PREFIXES):
            continue
        out["custom"][name] = value
    return out


def describe_free(node: dict) -> str:
    free = node["free"]
    return (f"node {node['address']} ({node['node_id'][:8]}) has {_amount(free['CPU'])} CPU, "
            f"{_amount(free['GPU'])} GPU, {free['memory_bytes'] / _GIB:.1f} GiB memory")


def _amount(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
