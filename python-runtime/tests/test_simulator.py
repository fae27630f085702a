"""The simulator engine (a load-test token source, docs/simulator.md): its cadence,
batch limit, deterministic text, stop strings, logprobs and usage, through its
scheduler with a test clock, and through a real runtime process, where one engine
step's chunks for many calls must leave as one BATCH frame (protocol v2)."""

import json
import os

import pytest

from hangar_runtime.engines.simulator.engine import SimulatorEngine
from hangar_runtime.engines.simulator.text import answer_text
from hangar_runtime.errors import InvalidModel

from harness import CALL, CHUNK, END, ERROR, RESULT


# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Sink:
    def __init__(self, call_id, stream=True):
        self.call_id, self.stream, self.alone = call_id, stream, False
        self.closed, self.chunks, self.result, self.error = False, [], None, None

    def chunk(self, value):
        self.chunks.append(value)

    def finish(self, value=None):
        if self.stream and value is not None:
            self.chunks.append(value)
        else:
            self.result = value
        self.closed = True

    def fail(self, exc, kind=None):
        self.error, self.closed = exc, True


def loaded(clock=None, **options):
    engine = SimulatorEngine()
    engine.load({"engine_kwargs": options, "model_ability": ["chat", "generate"]}, lambda *a: None)
    scheduler = engine.scheduler()
    if clock is not None:
        scheduler._clock = clock
    return engine, scheduler


def text_of(sink):
    return "".join(c.get("text", "") for c in sink.chunks)


def test_one_token_per_step_for_every_running_call_at_the_step_cadence():
    clock = Clock()
    _, sched = loaded(clock, step_ms=20, max_batch=2)
    sinks = [Sink(i) for i in range(3)]
    for sink in sinks:
        sched.submit("generate", ["a b"], {"generate_config": {"max_tokens": 3}}, sink)
    assert sched.wait_before_step() == 0  # idle: the first step is due at once
    sched.step()
    assert [len(s.chunks) for s in sinks] == [1, 1, 0]  # max_batch 2: the third waits
    assert sched.wait_before_step() == pytest.approx(0.020)
    clock.now += 0.005
    sched.step()  # woken early by a message: not due, nothing happens
    assert [len(s.chunks) for s in sinks] == [1, 1, 0]
    clock.now += 0.015
    sched.step()
    clock.now += 0.020
    sched.step()
    assert all(s.closed for s in sinks[:2]) and not sinks[2].closed
    assert text_of(sinks[0]) == answer_text(3) == "alpha bravo charlie "
    assert sinks[0].chunks[-1] == {"text": "", "finish_reason": "length",
                                   "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}}
    clock.now += 0.020
    sched.step()
    assert text_of(sinks[2]) == "alpha "  # admitted once a slot freed


def test_first_token_waits_for_ttft_and_a_late_runtime_does_not_burst():
    clock = Clock()
    _, sched = loaded(clock, step_ms=10, ttft_ms=25)
    sink = Sink(1)
    sched.submit("chat", [[{"role": "user", "content": "one two three"}]], {"generate_config": {"max_tokens": 2}}, sink)
    for _ in range(3):  # steps at 0, 10, 20 ms: before the first token is due
        sched.step()
        clock.now += 0.010
    assert sink.chunks == []
    sched.step()  # 30 ms
    assert text_of(sink) == "alpha "
    clock.now += 0.100  # the runtime fell far behind: the next step is one step from now
    sched.step()
    assert sink.closed and sink.chunks[-1]["usage"]["prompt_tokens"] == 3


def test_stop_strings_cut_the_text_and_are_never_sent_even_across_tokens():
    _, sched = loaded(step_ms=0)
    sink = Sink(1)
    sched.submit("generate", ["x"], {"generate_config": {"max_tokens": 10, "stop": ["zulu", "lie delta"]}}, sink)
    while sched.has_work():
        sched.step()
    assert text_of(sink) == "alpha bravo char"
    assert sink.chunks[-1]["finish_reason"] == "stop" and sink.chunks[-1]["stop_sequence"] == "lie delta"
    assert sink.chunks[-1]["usage"]["completion_tokens"] == 4


WEATHER = [{"type": "function", "function": {"name": "weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]},
                                     "days": {"type": "integer"}, "hourly": {"type": "boolean"}}}}},
           {"type": "function", "function": {"name": "time", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize("stream", [True, False])
def test_a_forced_tool_choice_is_answered_with_a_call_built_from_the_schema(stream):
    import json
    _, sched = loaded(step_ms=0)
    chat = [{"role": "user", "content": "weather please"}]
    answers = {}
    for choice in ("required", {"type": "function", "function": {"name": "time"}}, "auto", "none"):
        sink = Sink(1, stream=stream)
        sched.submit("chat", [chat], {"generate_config": {"max_tokens": 30}, "tools": WEATHER, "tool_choice": choice}, sink)
        while sched.has_work():
            sched.step()
        answers[json.dumps(choice)] = sink.chunks[-1] if stream else sink.result
    required = answers['"required"']
    assert required["finish_reason"] == "tool_calls" and required["text"] == ""
    call = required["tool_calls"][0]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "bravo", "unit": "c", "days": 1, "hourly": True}
    # Its steps count as generated tokens: one per word of the call's JSON.
    assert required["usage"]["completion_tokens"] == len(json.dumps(call["function"]).split())
    named = answers[json.dumps({"type": "function", "function": {"name": "time"}})]
    assert named["tool_calls"][0]["function"] == {"name": "time", "arguments": "{}"}
    for free in ('"auto"', '"none"'):  # the model's choice: the simulator answers text
        assert answers[free]["finish_reason"] == "length" and "tool_calls" not in answers[free]


def test_a_forced_call_follows_refs_into_the_schemas_own_definitions():
    from hangar_runtime.engines.simulator.tool_call import forced_tool_call
    # Pydantic's shape: a nested model and an enum as definitions, Optional as anyOf with null.
    parameters = {"$defs": {"Color": {"type": "string", "enum": ["red", "blue"]},
                            "Size": {"type": "object", "properties": {"n": {"type": "integer"}}}},
                  "definitions": {"Old": {"const": "legacy"}},
                  "type": "object", "properties": {"color": {"$ref": "#/$defs/Color"},
                                                   "size": {"anyOf": [{"$ref": "#/$defs/Size"}, {"type": "null"}]},
                                                   "old": {"$ref": "#/definitions/Old"}}}
    call = forced_tool_call([{"type": "function", "function": {"name": "paint", "parameters": parameters}}], "required")
    assert json.loads(call["function"]["arguments"]) == {"color": "red", "size": {"n": 1}, "old": "legacy"}


def test_a_forced_call_cut_by_max_tokens_is_no_call_and_an_unknown_name_is_refused():
    _, sched = loaded(step_ms=0)
    chat = [{"role": "user", "content": "hi"}]
    sink = Sink(1, stream=False)
    sched.submit("chat", [chat], {"generate_config": {"max_tokens": 2}, "tools": WEATHER, "tool_choice": "required"}, sink)
    while sched.has_work():
        sched.step()
    assert sink.result["finish_reason"] == "length" and "tool_calls" not in sink.result
    with pytest.raises(ValueError, match="nope") as refused:
        sched.submit("chat", [chat], {"tools": WEATHER, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
                     Sink(2, stream=False))
    assert refused.value.param == "tool_choice"


def test_non_stream_answer_with_logprobs_and_echo():
    _, sched = loaded(step_ms=0)
    sink = Sink(1, stream=False)
    sched.submit("generate", ["hi"], {"generate_config": {"max_tokens": 2, "echo": True, "logprobs": True,
                                                          "top_logprobs": 2}}, sink)
    while sched.has_work():
        sched.step()
    assert sink.result["text"] == "hialpha bravo "
    assert [e["token"] for e in sink.result["logprobs"]] == ["alpha ", "bravo "]
    assert len(sink.result["logprobs"][0]["top_logprobs"]) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_a_stop_string_is_looked_for_in_what_is_generated_not_in_the_echoed_prompt(stream):
    _, sched = loaded(step_ms=0)
    sink = Sink(1, stream=stream)
    sched.submit("generate", ["Hello world, charlie"], {"generate_config": {"max_tokens": 4, "echo": True,
                                                                           "stop": ["world", "charlie"]}}, sink)
    while sched.has_work():
        sched.step()
    text = "".join(c.get("text", "") for c in sink.chunks) if stream else sink.result["text"]
    # The whole prompt, then the answer up to the generated "charlie" (its third word).
    assert text == "Hello world, charliealpha bravo "
    final = sink.chunks[-1] if stream else sink.result
    assert final["finish_reason"] == "stop"


def test_token_id_prompts_count_their_ids_and_echo_as_its_words():
    _, sched = loaded(step_ms=0)
    sink = Sink(1, stream=False)
    sched.submit("generate", [[0, 1, 17]], {"generate_config": {"max_tokens": 1, "echo": True}}, sink)
    while sched.has_work():
        sched.step()
    assert sink.result["text"] == "alpha bravo bravo alpha "
    assert sink.result["usage"]["prompt_tokens"] == 3
    for bad in ([], [1, -1], [1.5]):
        with pytest.raises(ValueError) as refused:
            sched.submit("generate", [bad], {}, Sink(2, stream=False))
        assert refused.value.param == "prompt"


def test_closed_calls_leave_the_batch():
    _, sched = loaded(step_ms=0, max_batch=1)
    first, second = Sink(1), Sink(2)
    sched.submit("generate", ["x"], {"generate_config": {"max_tokens": 100}}, first)
    sched.submit("generate", ["x"], {"generate_config": {"max_tokens": 1}}, second)
    sched.step()
    first.closed = True  # aborted by the control plane
    sched.step()
    assert second.closed and text_of(second) == "alpha "
    assert len(first.chunks) == 1


@pytest.mark.parametrize("options, field", [({"step_ms": -1}, "step_ms"), ({"max_batch": 0}, "max_batch"),
                                            ({"max_batch": 2.5}, "max_batch"), ({"ttft_ms": "soon"}, "ttft_ms")])
def test_bad_options_fail_the_load_naming_the_field(options, field):
    with pytest.raises(InvalidModel, match=field):
        loaded(**options)


def test_fields_it_does_not_read_are_named_in_a_warning(caplog):
    with caplog.at_level("WARNING", logger="hangar_runtime.simulator"):
        engine, _ = loaded(stepms=5, device="cpu", step_ms=5)
    assert engine.describe()["simulator"]["step_ms"] == 5
    assert [r.getMessage() for r in caplog.records] == [
        "the simulator reads only step_ms, ttft_ms and max_batch; it ignores device, stepms"]
    caplog.clear()
    with caplog.at_level("WARNING", logger="hangar_runtime.simulator"):
        loaded(step_ms=5, max_batch=3)
    assert caplog.records == []


def test_bad_requests_are_refused_before_they_run():
    _, sched = loaded()
    with pytest.raises(ValueError, match="top_logprobs"):
        sched.submit("generate", ["x"], {"generate_config": {"logprobs": 50}}, Sink(1))
    with pytest.raises(TypeError, match="prompt"):
        sched.submit("generate", [3], {}, Sink(2))
    with pytest.raises(ValueError, match="messages"):
        sched.submit("chat", [[]], {}, Sink(3))


def test_a_step_for_many_streams_leaves_the_runtime_as_one_batch_frame(spawn):
    rt = spawn("sim-0")
    rt.hello()
    ready = rt.load_ok({"engine": "simulator", "model_uid": "sim", "replica_uid": "sim-0",
                        "engine_kwargs": {"step_ms": 50}})
    assert ready["engine"] == "simulator"
    for call_id in range(1, 9):
        rt.send(CALL, {"id": call_id, "method": "generate", "args": ["p"], "kwargs": {"generate_config": {"max_tokens": 3}},
                       "stream": True})
    texts, ended = {i: "" for i in range(1, 9)}, set()
    while len(ended) < 8:
        msg_type, body = rt.recv()
        assert msg_type in (CHUNK, END), body
        if msg_type == CHUNK:
            texts[body["id"]] += body["value"]["text"]
        else:
            ended.add(body["id"])
    assert all(t == answer_text(3) for t in texts.values())
    # 8 calls x (3 tokens + final chunk + END) in a handful of steps, not 40 frames.
    assert 1 <= rt.batch_frames <= 6
    rt.send(CALL, {"id": 20, "method": "nope", "args": [], "kwargs": {}, "stream": False})
    assert rt.expect(ERROR)["kind"] == "unknown_method"
    # A method that is not even a string (unhashable) is answered, not fatal.
    rt.send(CALL, {"id": 21, "method": ["generate"], "args": [], "kwargs": {}, "stream": False})
    assert rt.expect(ERROR)["kind"] == "unknown_method"
    rt.send(CALL, {"id": 22, "method": "generate", "args": ["p"], "kwargs": {"generate_config": {"max_tokens": 1}}})
    assert rt.expect(RESULT)["value"]["text"] == "alpha "


def test_the_simulator_keeps_the_runtimes_cpu_priority(spawn):
    """Its steps are timers standing in for a GPU's, not CPU work (Engine.cpu_bound):
    lowered like a CPU engine, a busy control plane would make them late."""
    rt = spawn("sim-0", env={"CUDA_VISIBLE_DEVICES": ""})
    rt.hello()
    rt.load_ok({"engine": "simulator", "model_uid": "sim", "replica_uid": "sim-0", "engine_kwargs": {"step_ms": 5}})
    rt.send(CALL, {"id": 1, "method": "generate", "args": ["p"], "kwargs": {"generate_config": {"max_tokens": 1}}})
    assert rt.expect(RESULT)["value"]["text"] == "alpha "
    pid = rt.process.pid
    assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0)
    assert os.sched_getscheduler(pid) == os.sched_getscheduler(0)
    assert "the work loop computes at" not in rt.stderr()


def test_answers_end_where_the_registered_context_is_full():
    # As the transformers and vLLM engines do: max_tokens past the context is cut to the
    # room the prompt leaves, and a prompt that fills the context is refused.
    engine = SimulatorEngine()
    engine.load({"engine_kwargs": {"step_ms": 0}, "context_length": 8}, lambda *a: None)
    sched = engine.scheduler()
    sink = Sink(1, stream=False)
    sched.submit("generate", ["one two three"], {"generate_config": {"max_tokens": 10**9}}, sink)
    while sched.has_work():
        sched.step()
    assert sink.result["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    assert sink.result["finish_reason"] == "length"
    with pytest.raises(ValueError, match="no room in the model's context of 8 tokens"):
        sched.submit("chat", [[{"role": "user", "content": "a b c d e f g h"}]], {}, Sink(2))


def test_a_large_prompt_is_counted_a_slice_at_a_time_as_whole_words():
    from hangar_runtime.engines.simulator import text

    size = text._COUNT_SLICE
    # Words cut by a slice's edge count once; spaces at the edges are no word.
    for prompt in ["x" * size + "y" * size + " z", ("ab " * size)[: 3 * size + 5], " " * size + "w", "a \n" * (size // 2)]:
        assert text.count_prompt_tokens(prompt) == len(prompt.split())
