"""The sentence_transformers engine's window batcher with a fake task and a fake
clock (no model): which calls share a forward pass, and how failures stay with
the call that caused them. Then the work loop driving it for real: a window
is waited out on the inbox, not spun through, and a scheduler answering from another
thread wakes it."""

import queue
import threading
import time

import pytest

from hangar_runtime import protocol
from hangar_runtime.aborts import AbortRegistry
from hangar_runtime.batch_calls import BatchedCalls
from hangar_runtime.engines.base import BatchScheduler
from hangar_runtime.engines.sentence_transformers.window_batcher import WindowBatcher
from hangar_runtime.replies import Replies
from hangar_runtime.work_loop import WorkLoop

WINDOW_S = 0.005


class Request:
    def __init__(self, items):
        self.items, self.size = items, len(items)


class FakeTask:
    """Echoes each input upper-cased; "bad" fails prepare, "boom" fails run."""
    method = "embed"

    def __init__(self):
        self.passes: list[list[str]] = []

    def prepare(self, args, kwargs):
        if "bad" in args[0]:
            raise ValueError("input 0 is bad")
        return Request(args[0])

    def run(self, requests):
        items = [i for r in requests for i in r.items]
        self.passes.append(items)
        if "boom" in items:
            raise RuntimeError("boom")
        return [[i.upper() for i in r.items] for r in requests]


class Sink:
    stream = False

    def __init__(self, call_id=0, alone=False):
        self.call_id, self.alone, self.closed, self.value, self.error = call_id, alone, False, None, None

    def chunk(self, value):
        raise AssertionError("no chunks here")

    def finish(self, value=None):
        self.value, self.closed = value, True

    def fail(self, exc, kind=None):
        self.error, self.closed = exc, True


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


@pytest.fixture
def rig():
    task, clock = FakeTask(), Clock()
    return task, clock, WindowBatcher(task, WINDOW_S, max_batch_size=4, clock=clock)


def submit(batcher, items, alone=False) -> Sink:
    sink = Sink(alone=alone)
    batcher.submit("embed", [items], {}, sink)
    return sink


def test_calls_within_the_window_share_one_pass(rig):
    task, clock, batcher = rig
    assert not batcher.has_work()
    a = submit(batcher, ["a"])
    assert batcher.wait_before_step() == pytest.approx(WINDOW_S)
    clock.now += 0.003
    b = submit(batcher, ["b", "c"])
    # The window runs from the first waiting call, not the latest.
    assert batcher.wait_before_step() == pytest.approx(0.002)
    clock.now += 0.002
    assert batcher.wait_before_step() == 0.0
    batcher.step()
    assert task.passes == [["a", "b", "c"]]
    assert (a.value, b.value) == (["A"], ["B", "C"])
    assert not batcher.has_work() and list(batcher.passes) == [2]


def test_a_call_sent_alone_opens_no_window_and_takes_what_is_queued(rig):
    task, clock, batcher = rig
    a = submit(batcher, ["a"], alone=True)
    assert batcher.wait_before_step() == 0.0  # nobody else was calling: no window
    b = submit(batcher, ["b"])  # already in the inbox when the loop drains it
    assert batcher.wait_before_step() == 0.0
    batcher.step()
    assert task.passes == [["a", "b"]] and (a.value, b.value) == (["A"], ["B"])


def test_alone_opens_no_window_only_when_nothing_waits(rig):
    task, clock, batcher = rig
    submit(batcher, ["a"])
    clock.now += 0.001
    # Sent alone, yet a call is waiting in its window: it joins that window.
    submit(batcher, ["b"], alone=True)
    assert batcher.wait_before_step() == pytest.approx(WINDOW_S - 0.001)


def test_a_full_window_closes_at_once_and_the_rest_wait_in_order(rig):
    task, clock, batcher = rig
    sinks = [submit(batcher, ["a", "b"]), submit(batcher, ["c"]), submit(batcher, ["d", "e"]), submit(batcher, ["f"])]
    assert batcher.wait_before_step() == 0.0  # 6 inputs waiting, max 4
    batcher.step()
    # Arrival order: the third call would overflow, so it and the fourth go next.
    assert task.passes == [["a", "b", "c"]]
    clock.now += WINDOW_S  # the rest have waited a whole window too
    assert batcher.has_work() and batcher.wait_before_step() == 0.0
    batcher.step()
    assert task.passes[1] == ["d", "e", "f"]
    assert [s.value for s in sinks] == [["A", "B"], ["C"], ["D", "E"], ["F"]]


def test_a_call_bigger_than_a_batch_is_served_alone(rig):
    task, _, batcher = rig
    big, small = submit(batcher, list("abcdef")), submit(batcher, ["g"])
    batcher.step()
    batcher.step()
    assert task.passes == [list("abcdef"), ["g"]]
    assert big.value == list("ABCDEF") and small.value == ["G"]


def test_a_call_failing_its_checks_never_joins_a_batch(rig):
    task, _, batcher = rig
    good = submit(batcher, ["a"])
    with pytest.raises(ValueError, match="input 0"):
        submit(batcher, ["bad"])
    batcher.step()
    assert task.passes == [["a"]] and good.value == ["A"]


def test_closed_calls_are_not_encoded(rig):
    task, _, batcher = rig
    aborted, kept = submit(batcher, ["a"]), submit(batcher, ["b"])
    aborted.closed = True  # what an ABORT does to its sink before the step
    batcher.step()
    assert task.passes == [["b"]] and kept.value == ["B"] and aborted.value is None


def test_a_failing_pass_is_retried_call_by_call(rig):
    task, _, batcher = rig
    ok1, boom, ok2 = submit(batcher, ["a"]), submit(batcher, ["boom"]), submit(batcher, ["c"])
    batcher.step()
    assert task.passes == [["a", "boom", "c"], ["a"], ["boom"], ["c"]]
    assert ok1.value == ["A"] and ok2.value == ["C"]
    assert isinstance(boom.error, RuntimeError) and boom.value is None


class Outbox:
    def __init__(self):
        self.answers: queue.Queue = queue.Queue()

    def data(self, msg_type, body):
        self.send_data(protocol.encode(msg_type, body))

    def send_data(self, frame):
        msg_type, body = protocol.decode(frame)
        # One step's answers come as one BATCH frame (protocol v2): each is put alone.
        for item in body["items"] if msg_type == protocol.BATCH else [(msg_type, body)]:
            self.answers.put(tuple(item))

    def control(self, msg_type, body):
        pass


class CountingBatcher(WindowBatcher):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps = self.waits = 0

    def wait_before_step(self):
        self.waits += 1
        return super().wait_before_step()

    def step(self):
        self.steps += 1
        super().step()


def test_the_work_loop_waits_out_a_window_on_its_inbox():
    """A call arriving 50 ms into a 500 ms window joins it; the loop steps once
    for the window instead of spinning; SHUTDOWN during a window ends the loop."""
    task = FakeTask()
    batcher = CountingBatcher(task, 0.5, max_batch_size=64)
    inbox, outbox = queue.Queue(), Outbox()
    loop = WorkLoop(inbox, outbox, AbortRegistry(), threading.Event())
    loop._methods = {"embed": lambda *a: None}
    loop._batch = BatchedCalls(batcher, Replies(outbox), loop._aborts)
    runner = threading.Thread(target=loop._run, daemon=True)
    runner.start()
    started = time.monotonic()
    inbox.put((protocol.CALL, {"id": 1, "method": "embed", "args": [["a"]], "kwargs": {}}))
    time.sleep(0.05)
    inbox.put((protocol.CALL, {"id": 2, "method": "embed", "args": [["b"]], "kwargs": {}}))
    answers = [outbox.answers.get(timeout=5), outbox.answers.get(timeout=5)]
    elapsed = time.monotonic() - started
    assert sorted((body["id"], body["value"]) for _, body in answers) == [(1, ["A"]), (2, ["B"])]
    assert task.passes == [["a", "b"]]
    assert 0.45 < elapsed < 3, elapsed
    assert batcher.steps == 1
    assert batcher.waits <= 4  # one per message and one per wait: no spinning
    inbox.put((protocol.CALL, {"id": 3, "method": "embed", "args": [["c"]], "kwargs": {}}))
    time.sleep(0.05)  # call 3's window is open
    stopping = time.monotonic()
    inbox.put((protocol.SHUTDOWN, {}))
    runner.join(timeout=3)
    assert not runner.is_alive()
    assert time.monotonic() - stopping < 0.4  # it did not sit out the window first
    assert task.passes == [["a", "b"]]



def test_the_work_loop_serves_a_call_sent_alone_without_its_window():
    """With a 10 s window, a CALL marked `alone` is answered at once, and a second
    CALL already queued behind it shares its pass: the `alone` flag travels from
    the wire through the work loop to the batcher."""
    task = FakeTask()
    batcher = CountingBatcher(task, 10.0, max_batch_size=64)
    inbox, outbox = queue.Queue(), Outbox()
    loop = WorkLoop(inbox, outbox, AbortRegistry(), threading.Event())
    loop._methods = {"embed": lambda *a: None}
    loop._batch = BatchedCalls(batcher, Replies(outbox), loop._aborts)
    inbox.put((protocol.CALL, {"id": 1, "method": "embed", "args": [["a"]], "kwargs": {}, "alone": True}))
    inbox.put((protocol.CALL, {"id": 2, "method": "embed", "args": [["b"]], "kwargs": {}}))
    runner = threading.Thread(target=loop._run, daemon=True)
    runner.start()
    answers = [outbox.answers.get(timeout=5), outbox.answers.get(timeout=5)]
    assert sorted((body["id"], body["value"]) for _, body in answers) == [(1, ["A"]), (2, ["B"])]
    assert task.passes == [["a", "b"]]
    inbox.put((protocol.SHUTDOWN, {}))
    runner.join(timeout=3)
    assert not runner.is_alive()


class OffThreadScheduler(BatchScheduler):
    """Results made on another thread, as vLLM's event loop makes them: each call is
    answered by a thread a moment after it is submitted, and while nothing is ready
    the scheduler lets the work loop wait 60 s on its inbox."""
    methods = frozenset({"embed"})

    def __init__(self):
        self._ready: queue.Queue = queue.Queue()
        self._open: list = []
        self._wake = lambda: None

    def set_wake(self, wake):
        self._wake = wake

    def submit(self, method, args, kwargs, sink):
        self._open.append(sink)

        def answer():
            time.sleep(0.05)
            self._ready.put((sink, [a.upper() for a in args[0]]))
            self._wake()
        threading.Thread(target=answer, daemon=True).start()

    def has_work(self):
        return bool(self._open)

    def wait_before_step(self):
        return 0.0 if not self._ready.empty() else 60.0

    def step(self):
        while not self._ready.empty():
            sink, value = self._ready.get()
            self._open.remove(sink)
            sink.finish(value)


def test_a_scheduler_that_answers_on_another_thread_wakes_the_work_loop():
    """Without the wake the answer would wait out the scheduler's 60 s: the test's
    5 s wait for it would fail."""
    inbox, outbox = queue.Queue(), Outbox()
    loop = WorkLoop(inbox, outbox, AbortRegistry(), threading.Event())
    loop._methods = {"embed": lambda *a: None}
    loop._use_scheduler(OffThreadScheduler())
    runner = threading.Thread(target=loop._run, daemon=True)
    runner.start()
    for call_id in (1, 2):
        inbox.put((protocol.CALL, {"id": call_id, "method": "embed", "args": [["x"]], "kwargs": {}}))
        assert outbox.answers.get(timeout=5) == (protocol.RESULT, {"id": call_id, "value": ["X"]})
    inbox.put((protocol.SHUTDOWN, {}))
    runner.join(timeout=3)
    assert not runner.is_alive()
