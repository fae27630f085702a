"""The work loop's side of batching (hangar_runtime.batch_calls), with a fake
scheduler and outbox: what goes out for each call, aborts, and failures."""

import pytest

from hangar_runtime import protocol
from hangar_runtime.aborts import AbortRegistry
from hangar_runtime.batch_calls import BatchedCalls
from hangar_runtime.engines.base import BatchScheduler
from hangar_runtime.replies import Replies

NAMES = {protocol.RESULT: "RESULT", protocol.CHUNK: "CHUNK", protocol.END: "END", protocol.ERROR: "ERROR"}


class FakeOutbox:
    def __init__(self):
        self.sent: list[tuple] = []
        self.frames = 0

    def data(self, msg_type, body):
        self.send_data(protocol.encode(msg_type, body))

    def send_data(self, frame):
        msg_type, body = protocol.decode(frame)
        # A step's messages come as one BATCH frame (protocol v2); unpacked in order.
        items = body["items"] if msg_type == protocol.BATCH else [(msg_type, body)]
        self.frames += 1
        for item_type, item in items:
            detail = item.get("value", item.get("kind"))
            self.sent.append((item["id"], NAMES[item_type], detail))


class Script(BatchScheduler):
    """Each call's sink gets, step by step, the actions listed in its args
    ("chunk", "finish"; anything else: nothing this step)."""
    methods = frozenset({"run"})

    def __init__(self):
        self.calls: list = []
        self.explode = False

    def submit(self, method, args, kwargs, sink):
        if args and args[0] == "bad":
            raise ValueError("bad input")
        self.calls.append((sink, list(args)))

    def has_work(self):
        return any(not sink.closed for sink, _ in self.calls)

    def step(self):
        if self.explode:
            raise RuntimeError("kaboom")
        for sink, actions in self.calls:
            if sink.closed or not actions:
                continue
            action = actions.pop(0)
            if action == "chunk":
                sink.chunk({"n": len(actions)})
            elif action == "finish":
                sink.finish({"done": True})


@pytest.fixture
def rig():
    outbox, aborts, script = FakeOutbox(), AbortRegistry(), Script()
    return BatchedCalls(script, Replies(outbox), aborts), outbox, aborts, script


def run_until_idle(batch, limit=50):
    for _ in range(limit):
        if not batch.busy():
            return
        batch.step()
    raise AssertionError("still busy")


def test_stream_and_non_stream_calls_share_steps(rig):
    batch, outbox, _, _ = rig
    batch.submit(1, "run", ["chunk", "chunk", "finish"], {}, stream=True)
    batch.submit(2, "run", ["finish"], {}, stream=False)
    run_until_idle(batch)
    assert outbox.sent == [(1, "CHUNK", {"n": 2}), (2, "RESULT", {"done": True}), (1, "CHUNK", {"n": 1}),
                           (1, "CHUNK", {"done": True}), (1, "END", None)]


def test_bad_input_is_answered_at_once(rig):
    batch, outbox, _, _ = rig
    batch.submit(3, "run", ["bad"], {}, stream=False)
    assert outbox.sent == [(3, "ERROR", "invalid")] and not batch.busy()


def test_abort_stops_a_call_at_the_next_step_and_is_forgotten(rig):
    batch, outbox, aborts, _ = rig
    batch.submit(4, "run", ["chunk"] * 5 + ["finish"], {}, stream=True)
    batch.submit(5, "run", ["wait", "finish"], {}, stream=False)  # non-stream: cut too
    batch.step()
    aborts.abort(4)
    aborts.abort(5)
    run_until_idle(batch)
    assert outbox.sent == [(4, "CHUNK", {"n": 5}), (4, "ERROR", "aborted"), (5, "ERROR", "aborted")]
    assert not aborts.is_aborted(4) and not aborts.is_aborted(5)


def test_abort_arriving_during_a_step_stops_the_next_chunk(rig):
    batch, outbox, aborts, script = rig
    batch.submit(6, "run", ["chunk", "chunk"], {}, stream=True)
    real_step = script.step

    def step_with_abort():
        aborts.abort(6)  # arrives after the sweep, before the chunk
        real_step()

    script.step = step_with_abort
    batch.step()
    assert outbox.sent == [(6, "ERROR", "aborted")]


def test_a_step_that_raises_fails_every_open_call(rig):
    batch, outbox, _, script = rig
    batch.submit(7, "run", ["chunk", "finish"], {}, stream=True)
    batch.submit(8, "run", ["finish"], {}, stream=False)
    script.explode = True
    batch.step()
    assert outbox.sent == [(7, "ERROR", "internal"), (8, "ERROR", "internal")]
    assert not batch.busy()


def test_unsendable_value_ends_the_call_with_internal_error(rig):
    batch, outbox, _, script = rig
    batch.submit(9, "run", [], {}, stream=False)
    sink = script.calls[0][0]
    sink.finish({"value": object()})
    sink.finish({"again": 1})  # nothing after a call is answered
    assert outbox.sent == [(9, "ERROR", "internal")]


def test_stats_count_answers_and_the_calls_held_at_each_step(rig):
    # What the PONG's stats report (docs/runtime-protocol.md, "Stats").
    batch, _, _, _ = rig
    stats = batch._replies.stats
    for _ in range(3):  # the I/O thread counts CALLs as they arrive
        stats.call_received()
    batch.submit(1, "run", ["chunk", "finish"], {}, stream=True)
    batch.submit(2, "run", ["finish"], {}, stream=False)
    batch.submit(3, "run", ["bad"], {}, stream=False)  # answered at once
    assert stats.snapshot()["queue_depth"] == 2
    batch.step()
    assert (stats.batch_steps, stats.last_batch_size) == (1, 2)
    run_until_idle(batch)
    snap = stats.snapshot()
    assert snap["queue_depth"] == 0 and snap["batch_size"] == 1
    assert (snap["batch_steps"], snap["batch_step_calls"]) == (2, 3)
