"""Placement decisions of the cluster agent, on node records shaped as placement.nodes()
returns them (Ray's own scheduling is exercised by test/integration/ray-cluster.test.ts)."""

import pytest

pytest.importorskip("ray")

from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402

from hangar_cluster import placement  # noqa: E402

GIB = 1024 ** 3


def node(node_id, address, cpu, gpu, free_cpu=None, free_gpu=None):
    total = {"CPU": cpu, "GPU": gpu, "memory_bytes": 8 * GIB, "custom": {}}
    free = {"CPU": cpu if free_cpu is None else free_cpu, "GPU": gpu if free_gpu is None else free_gpu,
            "memory_bytes": 4 * GIB, "custom": {}}
    return {"node_id": node_id, "address": address, "hostname": "h", "is_head": False, "total": total, "free": free}


LIVE = [node("a" * 56, "10.0.0.1", 4, 0, free_cpu=0), node("b" * 56, "10.0.0.2", 8, 2, free_gpu=1)]


def test_replicas_spread_when_a_node_fits():
    assert placement.strategy_for(placement.Ask(1, 0, None), LIVE) == "SPREAD"


def test_worker_ip_pins_to_that_node():
    strategy = placement.strategy_for(placement.Ask(1, 1, "10.0.0.2"), LIVE)
    assert isinstance(strategy, NodeAffinitySchedulingStrategy)
    assert strategy.node_id == "b" * 56 and strategy.soft is False


def test_no_fit_says_what_was_asked_and_what_is_free():
    with pytest.raises(placement.NoFit) as caught:
        placement.strategy_for(placement.Ask(1, 2, None), LIVE)
    assert str(caught.value) == (
        "asked for 1 CPU and 2 GPU; free: node 10.0.0.1 (aaaaaaaa) has 0 CPU, 0 GPU, 4.0 GiB memory; "
        "node 10.0.0.2 (bbbbbbbb) has 8 CPU, 1 GPU, 4.0 GiB memory")


def test_a_pinned_node_that_is_full_is_no_fit_even_if_another_has_room():
    with pytest.raises(placement.NoFit, match=r"on the node with address 10\.0\.0\.1; free: node 10\.0\.0\.1 "):
        placement.strategy_for(placement.Ask(1, 0, "10.0.0.1"), LIVE)


def test_an_unknown_worker_ip_names_the_nodes_there_are():
    with pytest.raises(placement.NoFit, match=r"no live Ray node has that address \(nodes: 10\.0\.0\.1, 10\.0\.0\.2\)"):
        placement.strategy_for(placement.Ask(0.5, 0, "10.9.9.9"), LIVE)


def test_fractional_asks_print_as_numbers():
    assert placement.Ask(0.5, 0, None).describe() == "0.5 CPU and 0 GPU"


def test_a_node_sharing_its_address_is_pinned_by_the_name_workers_gives_it():
    # /v1/workers names nodes that share an address `<address>#<node id prefix>`: that
    # name pins to the node (before, only the address was matched, and it picked the first).
    shared = [node("c" * 56, "127.0.0.1", 2, 0), node("d" * 56, "127.0.0.1", 2, 0)]
    strategy = placement.strategy_for(placement.Ask(1, 0, "127.0.0.1#dddddddd"), shared)
    assert isinstance(strategy, NodeAffinitySchedulingStrategy) and strategy.node_id == "d" * 56
    with pytest.raises(placement.NoFit, match="no live Ray node has that address"):
        placement.strategy_for(placement.Ask(1, 0, "127.0.0.1#eeee"), shared)


def test_resources_held_for_replicas_being_placed_count_as_taken():
    # 2 free CPUs in all; replicas being placed hold 2: a third is a NoFit at once (before,
    # each replica of a launch was checked against the same free CPUs, all passed, and the
    # extra ones waited out the placement timeout).
    live = [node("a" * 56, "10.0.0.1", 4, 0, free_cpu=1), node("b" * 56, "10.0.0.2", 4, 0, free_cpu=1)]
    one = placement.Ask(1, 0, None)
    assert placement.strategy_for(one, live, [one]) == "SPREAD"
    with pytest.raises(placement.NoFit, match="2 CPU and 0 GPU of what is free are held for replicas being placed"):
        placement.strategy_for(one, live, [one, one])
    # Only what the ask uses counts: a GPU held does not refuse a CPU replica...
    assert placement.strategy_for(one, live, [placement.Ask(0, 1, None)]) == "SPREAD"
    # ...and a hold pinned to another node does not refuse one pinned here.
    pinned = placement.Ask(1, 0, "10.0.0.2")
    strategy = placement.strategy_for(pinned, live, [placement.Ask(1, 0, "10.0.0.1")])
    assert isinstance(strategy, NodeAffinitySchedulingStrategy) and strategy.node_id == "b" * 56
    with pytest.raises(placement.NoFit, match="held for replicas being placed"):
        placement.strategy_for(pinned, live, [placement.Ask(1, 0, "10.0.0.2")])
