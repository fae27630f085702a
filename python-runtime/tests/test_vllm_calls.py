"""The vllm engine adapter against tests/vllm_call_double: a stand-in for vllm 0.30.0
with that release's names, signatures and fields (README there). This proves that the
adapter's calls are well-formed — V1's AsyncLLM.from_engine_args, a TokensPrompt,
SamplingParams asking for DELTA outputs, abort by request id, shutdown() when the
runtime stops — and that deltas become the protocol's chunks and usage. It proves
nothing about GPUs or about vLLM's own behaviour: the double's tokens are a counter."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import ABORT, CALL, CHUNK, END, ERROR, LOAD_FAILED, RESULT, RUNTIME_DIR, SHUTDOWN

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


DOUBLE = Path(__file__).parent / "vllm_call_double"


def load_spec(model_path: str, **engine_kwargs) -> dict:
    # stop_token_ids: the registration's end tokens, as a family's are.
    return {"engine": "vllm", "model_type": "LLM", "model_uid": "v", "replica_uid": "v-0", "model_uri": model_path,
            "context_length": 512, "model_ability": ["chat", "generate"], "stop_token_ids": [2],
            "engine_kwargs": engine_kwargs}


def stream(rt, call_id: int, method: str, arg, **config) -> tuple[list[dict], int, dict]:
    rt.send(CALL, {"id": call_id, "method": method, "args": [arg], "kwargs": {"generate_config": config}, "stream": True})
    chunks = []
    while True:
        msg_type, body = rt.recv()
        if msg_type != CHUNK:
            return chunks, msg_type, body
        chunks.append(body["value"])


def test_launch_stream_abort_and_shutdown_are_well_formed_calls(spawn, workdir, tiny_llm):
    calls_log = workdir / "vllm-calls.jsonl"
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    ready = rt.load_ok(load_spec(tiny_llm["path"], gpu_memory_utilization=0.5, max_num_seqs=8))
    assert ready["engine"] == "vllm"

    chunks, end_type, _ = stream(rt, 1, "generate", "Hello there", max_tokens=5)
    assert end_type == END
    assert "".join(c["text"] for c in chunks) == "t0 t1 t2 t3 t4 "
    final = chunks[-1]
    assert final["finish_reason"] == "length"
    assert final["usage"]["completion_tokens"] == 5 and final["usage"]["prompt_tokens"] > 0

    chunks, end_type, _ = stream(rt, 2, "chat", [{"role": "user", "content": "Hi"}], max_tokens=2, logprobs=True,
                                 top_logprobs=2)
    assert end_type == END
    entries = [e for c in chunks for e in c.get("logprobs") or []]
    # Each token's text and own bytes from the model's tokenizer (the double's ids are 1000, 1001, its
    # alternatives 2000 on), as the Transformers engine gives them: vLLM's decoded text lost a partial character's bytes.
    texts = _token_texts(tiny_llm["path"], [1000, 1001, 2000, 2001])
    assert [(e["token"], e["bytes"]) for e in entries] == [texts[1000], texts[1001]]
    assert [(t["token"], t["bytes"]) for t in entries[0]["top_logprobs"]] == [texts[2000], texts[2001]]

    # OpenAI's penalties and logit_bias reach SamplingParams under its own names.
    chunks, end_type, _ = stream(rt, 4, "generate", "Hi", max_tokens=2, frequency_penalty=0.5, presence_penalty=-0.5,
                                 logit_bias={"7": 3.0})
    assert end_type == END

    # OpenAI's response_format reaches vLLM's structured outputs (StructuredOutputsParams).
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    _, end_type, _ = stream(rt, 5, "chat", [{"role": "user", "content": "Hi"}], max_tokens=2,
                            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
    assert end_type == END
    _, end_type, _ = stream(rt, 6, "chat", [{"role": "user", "content": "Hi"}], max_tokens=2, response_format={"type": "json_object"})
    assert end_type == END

    # vLLM's ignore_eos (vllm bench serve --ignore-eos): passed on, and the registration's
    # end tokens are not added as stop tokens; the request's own still are.
    _, end_type, _ = stream(rt, 7, "generate", "Hi", max_tokens=2, ignore_eos=True, stop_token_ids=[9])
    assert end_type == END
    # vLLM's min_p and min_tokens (min_tokens held to max_tokens, as SamplingParams requires).
    _, end_type, _ = stream(rt, 8, "generate", "Hi", max_tokens=2, min_p=0.1, min_tokens=5)
    assert end_type == END
    # The stop string that ended the text (vLLM's stop_reason) is the last CHUNK's stop_sequence.
    chunks, end_type, _ = stream(rt, 9, "generate", "Hi", max_tokens=6, stop=["zz", "t2"])
    assert end_type == END and "".join(c["text"] for c in chunks) == "t0 t1 "
    assert (chunks[-1]["finish_reason"], chunks[-1]["stop_sequence"]) == ("stop", "t2")
    chunks, _, _ = stream(rt, 10, "generate", "Hi", max_tokens=2)
    assert chunks[-1]["finish_reason"] == "length" and "stop_sequence" not in chunks[-1]
    # The request's own stop token is vLLM's stop_reason (an int), said as stop_token_id.
    chunks, _, _ = stream(rt, 11, "generate", "Hi", max_tokens=6, stop_token_ids=[1002])
    assert "".join(c["text"] for c in chunks) == "t0 t1 " and (chunks[-1]["finish_reason"], chunks[-1]["stop_token_id"]) == ("stop", 1002)

    rt.send(CALL, {"id": 3, "method": "generate", "args": ["x"], "kwargs": {"generate_config": {"max_tokens": 400}},
                   "stream": True})
    assert rt.expect(CHUNK)["id"] == 3
    rt.send_control(ABORT, {"id": 3})
    while True:
        msg_type, body = rt.recv()
        if msg_type != CHUNK:
            break
    assert (msg_type, body["kind"]) == (ERROR, "aborted")

    rt.send_control(SHUTDOWN, {})
    assert rt.wait_exit() == 0
    events = [json.loads(line) for line in calls_log.read_text().splitlines()]
    assert events[0]["event"] == "from_engine_args"
    assert all(e["output_kind"] == 1 for e in events if e["event"] == "generate")  # RequestOutputKind.DELTA
    guides = {e["request_id"]: e["guided"] for e in events if e["event"] == "generate"}
    assert guides["hangar-5"] == {"json": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    assert guides["hangar-6"] == {"json_object": True}
    assert guides["hangar-1"] is None
    generates = {e["request_id"]: e for e in events if e["event"] == "generate"}
    assert (generates["hangar-1"]["ignore_eos"], generates["hangar-1"]["stop_token_ids"]) == (False, [2])
    assert (generates["hangar-7"]["ignore_eos"], generates["hangar-7"]["stop_token_ids"]) == (True, [9])
    assert (generates["hangar-8"]["min_p"], generates["hangar-8"]["min_tokens"]) == (0.1, 2)
    assert (generates["hangar-1"]["min_p"], generates["hangar-1"]["min_tokens"]) == (0.0, 0)
    assert {"event": "abort", "request_ids": ["hangar-3"]} in events
    assert events[-1]["event"] == "shutdown"


def test_a_launch_argument_vllm_does_not_take_fails_the_load_naming_it(spawn, tiny_llm):
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE)})
    rt.hello()
    _, msg_type, body = rt.load(load_spec(tiny_llm["path"], gpu_memory_utilisation=0.5))
    assert msg_type == LOAD_FAILED and body["kind"] == "invalid"
    assert "gpu_memory_utilisation" in body["message"]


def test_sleep_mode_is_asked_for_and_sleep_and_wake_up_are_well_formed_calls(spawn, workdir, tiny_llm):
    """Sleep mode (docs/on-demand.md, "vLLM sleep mode"): a load with `sleep_mode` starts
    vLLM with enable_sleep_mode, READY says so, `sleep` reaches AsyncLLM.sleep(level=1)
    and `wake_up` AsyncLLM.wake_up(tags=None); between them no request reaches vLLM. The
    double proves the calls only: nothing here moves weights or measures a GPU."""
    calls_log = workdir / "vllm-calls.jsonl"
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    ready = rt.load_ok({**load_spec(tiny_llm["path"]), "sleep_mode": True})
    assert ready["description"]["sleep_mode"] is True

    msg_type, body = rt.ask(1, engine_method="sleep", level=1)
    assert msg_type == RESULT and body["value"]["sleeping"] is True and body["value"]["level"] == 1
    # Asleep: a call is refused by the runtime before it reaches vLLM.
    chunks, end_type, body = stream(rt, 2, "generate", "Hi", max_tokens=2)
    assert end_type == ERROR and "asleep" in body["message"] and chunks == []
    # Level 2 drops the weights, and waking would serve garbage without a reload: refused.
    for level in (2, 3):
        msg_type, body = rt.ask(3, engine_method="sleep", level=level)
        assert msg_type == ERROR and body["kind"] == "invalid" and body.get("param") == "level"
    msg_type, body = rt.ask(4, engine_method="wake_up")
    assert msg_type == RESULT and body["value"]["sleeping"] is False
    chunks, end_type, _ = stream(rt, 5, "generate", "Hi", max_tokens=2)
    assert end_type == END and "".join(c["text"] for c in chunks) == "t0 t1 "
    rt.send_control(SHUTDOWN, {})
    assert rt.wait_exit() == 0

    events = [json.loads(line) for line in calls_log.read_text().splitlines()]
    assert events[0]["event"] == "from_engine_args" and events[0]["enable_sleep_mode"] is True
    assert [e["event"] for e in events if e["event"] in ("sleep", "wake_up", "generate")] == ["sleep", "wake_up", "generate"]
    assert next(e for e in events if e["event"] == "sleep") == {"event": "sleep", "level": 1, "mode": "abort"}
    assert next(e for e in events if e["event"] == "wake_up") == {"event": "wake_up", "tags": None}


def test_without_sleep_mode_there_is_no_sleep_method_and_count_tokens_counts_a_chat_prompt(spawn, tiny_llm):
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE)})
    rt.hello()
    ready = rt.load_ok(load_spec(tiny_llm["path"]))
    assert "sleep_mode" not in ready["description"]
    msg_type, body = rt.ask(1, engine_method="sleep", level=1)
    assert msg_type == ERROR and body["kind"] == "unknown_method"

    # count_tokens: the prompt a chat call sends to vLLM, counted without generating.
    messages = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Weather in Paris?"}]
    tools = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
    counts = []
    for call_id, kwargs in ((2, {}), (4, {"tools": tools})):
        rt.send(CALL, {"id": call_id, "method": "count_tokens", "args": [messages], "kwargs": kwargs})
        counted = rt.expect(RESULT)["value"]["prompt_tokens"]
        rt.send(CALL, {"id": call_id + 1, "method": "chat", "args": [messages],
                       "kwargs": {"generate_config": {"max_tokens": 1}, **kwargs}, "stream": True})
        chunks = []
        while (message := rt.recv())[0] == CHUNK:
            chunks.append(message[1]["value"])
        assert message[0] == END
        assert counted == chunks[-1]["usage"]["prompt_tokens"] == chunks[0]["prompt_tokens"]
        counts.append(counted)
    assert counts[1] > counts[0]  # the template lists the tools
    # A prompt that leaves no room is refused as the chat call would refuse it.
    rt.send(CALL, {"id": 6, "method": "count_tokens", "args": [[{"role": "user", "content": "the fox " * 400}]], "kwargs": {}})
    refused = rt.expect(ERROR)
    assert refused["kind"] == "invalid" and "no room" in refused["message"]


def test_token_ids_echo_and_prompt_logprobs_reach_vllm_as_its_own_fields(spawn, workdir, tiny_llm):
    calls_log = workdir / "vllm-calls.jsonl"
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    rt.load_ok(load_spec(tiny_llm["path"]))
    # Token ids become vLLM's TokensPrompt as they are.
    chunks, end_type, _ = stream(rt, 1, "generate", [5, 6, 7], max_tokens=2)
    assert end_type == END and chunks[0]["prompt_tokens"] == 3 == chunks[-1]["usage"]["prompt_tokens"]
    # echo: the prompt's text first, in the stream's first CHUNK and in a RESULT.
    chunks, _, _ = stream(rt, 2, "generate", "Hello there", max_tokens=2, echo=True)
    assert chunks[0]["text"].startswith("Hello there") and "".join(c["text"] for c in chunks) == "Hello theret0 t1 "
    rt.send(CALL, {"id": 3, "method": "generate", "args": ["Hi"], "kwargs": {"generate_config": {"max_tokens": 1, "echo": True}}})
    assert rt.expect(RESULT)["value"]["text"] == "Hit0 "
    # echo with logprobs asks vLLM for prompt_logprobs; the entries lead with the prompt's tokens.
    for call_id, streamed in ((4, True), (5, False)):
        config = {"max_tokens": 1, "echo": True, "logprobs": True, "top_logprobs": 2}
        if streamed:
            chunks, _, _ = stream(rt, call_id, "generate", [5, 6, 7], **config)
            entries = [e for c in chunks for e in c.get("logprobs") or []]
        else:
            rt.send(CALL, {"id": call_id, "method": "generate", "args": [[5, 6, 7]], "kwargs": {"generate_config": config}})
            entries = rt.expect(RESULT)["value"]["logprobs"]
        assert entries[0]["logprob"] is None and entries[0]["top_logprobs"] is None
        texts = _token_texts(tiny_llm["path"], [6, 7, 1000, 4000, 4001])
        assert [(e["token"], e["logprob"]) for e in entries[1:3]] == [(texts[6][0], -2.0), (texts[7][0], -2.0)]
        assert [t["token"] for t in entries[1]["top_logprobs"]] == [texts[4000][0], texts[4001][0]]
        assert entries[3]["token"] == texts[1000][0] and len(entries) == 4
    rt.send(CALL, {"id": 6, "method": "generate", "args": [[5, 10 ** 9]], "kwargs": {}})
    refused = rt.expect(ERROR)
    assert (refused["kind"], refused["param"]) == ("invalid", "prompt") and "outside" in refused["message"]
    # The tokenizer's methods (vLLM's tokenizer routes) answer from the model's tokenizer, beside vLLM.
    rt.send(CALL, {"id": 7, "method": "tokenize", "args": ["Hello there"], "kwargs": {}})
    tokens = rt.expect(RESULT)["value"]["tokens"]
    rt.send(CALL, {"id": 8, "method": "detokenize", "args": [tokens], "kwargs": {}})
    assert "Hello there" in rt.expect(RESULT)["value"]["prompt"]
    rt.send(CALL, {"id": 9, "method": "tokenizer_info", "args": [], "kwargs": {}})
    assert rt.expect(RESULT)["value"]["model_max_length"] == 512
    rt.send_control(SHUTDOWN, {})
    assert rt.wait_exit() == 0
    generates = {e["request_id"]: e for e in map(json.loads, calls_log.read_text().splitlines()) if e["event"] == "generate"}
    assert generates["hangar-1"]["prompt_token_ids"] == [5, 6, 7]
    assert (generates["hangar-2"]["prompt_logprobs"], generates["hangar-4"]["prompt_logprobs"]) == (None, 2)


_WAKE_SCRIPT = r'''
import json, sys, threading
from hangar_runtime.engines.vllm_llm.engine import VllmEngine

engine = VllmEngine()
engine.load(json.loads(sys.argv[1]), lambda *a: None)
scheduler = engine.scheduler()
woken = threading.Event()
scheduler.set_wake(woken.set)

class Sink:
    call_id, stream, alone, closed = 1, True, True, False
    def __init__(self):
        self.chunks = []
    def chunk(self, value):
        self.chunks.append(value)
    def finish(self, value=None):
        self.chunks.append(value)
        self.closed = True
    def fail(self, exc, kind=None):
        raise exc

sink = Sink()
scheduler.submit("generate", ["Hello"], {"generate_config": {"max_tokens": 3}}, sink)
wakes = 0
while not sink.closed and wakes < 100:
    # Block as the work loop does between steps, but on the wake alone: no timeout to fall back on.
    if not woken.wait(timeout=10):
        break
    woken.clear()
    wakes += 1
    scheduler.step()
engine.close()
print(json.dumps({"closed": sink.closed, "text": "".join(c["text"] for c in sink.chunks), "wakes": wakes}))
'''


def test_each_vllm_output_wakes_the_work_loop(tiny_llm):
    """vLLM's outputs are made on its event loop's thread; each must end the work
    loop's wait on its inbox at once, or a token sits out the wait's timeout. Here
    the only way on is the wake: a missing one fails the 10 s wait."""
    done = subprocess.run([sys.executable, "-c", _WAKE_SCRIPT, json.dumps(load_spec(tiny_llm["path"]))],
                          cwd=RUNTIME_DIR, env={"PYTHONPATH": f"{DOUBLE}:{RUNTIME_DIR}", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["closed"] and result["text"] == "t0 t1 t2 "
    assert 1 <= result["wakes"] <= 3  # at most one per output, fewer when outputs arrive together


def test_lora_adapters_start_vllm_with_lora_and_reach_it_as_lora_requests(spawn, workdir, tiny_lora):
    calls_log = workdir / "vllm-lora-calls.jsonl"
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    lora = [{"lora_name": name, "local_path": path} for name, path in tiny_lora["adapters"].items()]
    ready = rt.load_ok({**load_spec(tiny_lora["path"]), "peft_model_config": {"lora_list": lora}})
    assert ready["description"]["lora_names"] == ["a", "b"]
    for call_id, name in ((1, "b"), (2, None)):
        _, end_type, _ = stream(rt, call_id, "generate", "Hi", max_tokens=2, lora_name=name)
        assert end_type == END
    _, end_type, body = stream(rt, 3, "generate", "Hi", max_tokens=2, lora_name="c")
    assert end_type == ERROR and body["kind"] == "invalid"
    assert "lora_name: c is not a LoRA adapter of this model; its adapters: a, b" in body["message"]
    rt.send_control(SHUTDOWN, {})
    rt.wait_exit()
    events = [json.loads(line) for line in calls_log.read_text().splitlines()]
    started = next(e for e in events if e["event"] == "from_engine_args")
    assert (started["enable_lora"], started["max_loras"]) == (True, 2)
    generated = [e["lora"] for e in events if e["event"] == "generate"]
    assert generated == [["b", 2, tiny_lora["adapters"]["b"]], None]


def test_image_parts_reach_vllm_as_multi_modal_data(spawn, workdir, tiny_vision, tiny_llm):
    from test_llm_vision import image_message, png

    calls_log = workdir / "vllm-vision-calls.jsonl"
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    rt.load_ok({**load_spec(tiny_vision["path"]), "model_ability": ["chat", "vision"],
                "chat_template": tiny_vision["chat_template"]})
    two = [image_message("Compare.", png(1), png(2, (64, 40))), {"role": "assistant", "content": "Yes."},
           image_message("Again?", png(3))]
    chunks, end_type, _ = stream(rt, 1, "chat", two, max_tokens=2)
    assert end_type == END
    # Usage counts the prompt as vLLM does, each image expanded to its tokens (the double: 4 each).
    assert chunks[-1]["usage"]["prompt_tokens"] == chunks[0]["prompt_tokens"] == generates_so_far(calls_log)[-1]["prompt_tokens"] + 3 * 3
    _, end_type, _ = stream(rt, 2, "chat", [{"role": "user", "content": "No image"}], max_tokens=2)
    assert end_type == END
    _, end_type, body = stream(rt, 3, "chat", [image_message("What?", "data:image/png;base64,@@")], max_tokens=2)
    assert end_type == ERROR and "messages[0].content[0]" in body["message"] and "not valid base64" in body["message"]
    rt.send_control(SHUTDOWN, {})
    rt.wait_exit()
    events = [json.loads(line) for line in calls_log.read_text().splitlines()]
    assert events[0]["limit_mm_per_prompt"] == {"image": 16}
    generates = {e["request_id"]: e for e in events if e["event"] == "generate"}
    # The PIL images in the order they appear; each is one placeholder token in the ids
    # vLLM gets (its processor expands them), so the prompt is short.
    assert generates["hangar-1"]["images"] == [[40, 48], [64, 40], [40, 48]]
    from transformers import AutoTokenizer

    rendered = ("<|im_start|>user\n<image>\n<image>\nCompare.<|im_end|>\n<|im_start|>assistant\nYes.<|im_end|>\n"
                "<|im_start|>user\n<image>\nAgain?<|im_end|>\n<|im_start|>assistant\n")
    tokenizer = AutoTokenizer.from_pretrained(tiny_vision["path"])
    assert generates["hangar-1"]["prompt_tokens"] == len(tokenizer(rendered, add_special_tokens=False)["input_ids"])
    assert generates["hangar-2"]["images"] == []

    # A model without the vision ability refuses image parts, before vLLM sees them.
    rt = spawn("v-1", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    rt.load_ok(load_spec(tiny_llm["path"]))
    _, end_type, body = stream(rt, 1, "chat", [image_message("What?", png(1))], max_tokens=2)
    assert end_type == ERROR and "takes text only, not image_url parts" in body["message"]
    assert body["param"] == "messages"


def generates_so_far(calls_log: Path) -> list[dict]:
    return [e for e in map(json.loads, calls_log.read_text().splitlines()) if e["event"] == "generate"]


WEATHER = {"type": "function", "function": {"name": "weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CLOCK = {"type": "function", "function": {"name": "clock", "parameters": {"type": "object"}}}


def test_a_forced_tool_choice_reaches_vllm_as_structured_outputs(spawn, workdir, tiny_llm):
    calls_log = workdir / "vllm-calls.jsonl"
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    spec = {**load_spec(tiny_llm["path"]), "model_ability": ["chat", "generate", "tools"]}
    rt.load_ok(spec)
    chat = [{"role": "user", "content": "Weather in Paris?"}]
    for call_id, choice in ((1, "required"), (2, {"type": "function", "function": {"name": "clock"}})):
        rt.send(CALL, {"id": call_id, "method": "chat", "args": [chat], "stream": False,
                       "kwargs": {"generate_config": {"max_tokens": 3}, "tools": [WEATHER, CLOCK], "tool_choice": choice}})
        msg_type, body = rt.recv()
        # The double's tokens are a counter, not JSON: the answer stays text. What this
        # proves is the schema vLLM was given (below), not vLLM's decoding.
        assert msg_type == RESULT and body["value"]["finish_reason"] == "length" and "tool_calls" not in body["value"]
    rt.send(CALL, {"id": 3, "method": "chat", "args": [chat], "stream": False,
                   "kwargs": {"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "nope"}}}})
    msg_type, body = rt.recv()
    assert msg_type == ERROR and body.get("param") == "tool_choice" and "nope" in body["message"]
    rt.send_control(SHUTDOWN, {})
    assert rt.wait_exit() == 0
    guides = {e["request_id"]: e["guided"] for e in map(json.loads, calls_log.read_text().splitlines()) if e["event"] == "generate"}
    alternatives = guides["hangar-1"]["json"]["items"]["anyOf"]
    assert guides["hangar-1"]["json"]["minItems"] == 1
    assert [a["properties"]["name"]["enum"] for a in alternatives] == [["weather"], ["clock"]]
    assert alternatives[0]["properties"]["parameters"] == WEATHER["function"]["parameters"]
    assert guides["hangar-2"] == {"json": {"type": "object"}}


def test_forced_tool_answers_become_calls():
    from hangar_runtime.engines.vllm_llm.forced_tools import ForcedToolCall

    required = ForcedToolCall([WEATHER, CLOCK], "required")
    calls = required.calls('[{"name": "weather", "parameters": {"city": "Paris"}}, {"name": "clock", "parameters": {}}]')
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("weather", {"city": "Paris"}), ("clock", {})]
    assert all(c["id"].startswith("call_") and c["type"] == "function" for c in calls)
    named = ForcedToolCall([WEATHER, CLOCK], {"type": "function", "function": {"name": "weather"}})
    assert named.guide == {"json": WEATHER["function"]["parameters"]}
    assert json.loads(named.calls('{"city": "Rome"}')[0]["function"]["arguments"]) == {"city": "Rome"}
    # Cut by max_tokens mid-JSON: no call, the text stays the answer.
    assert named.calls('{"city": "Ro') == [] and required.calls('{"name": "weather"}') == []


def _token_texts(path, ids):
    """{id: (text, bytes)} as the model's tokenizer gives them (token_bytes.py)."""
    from transformers import AutoTokenizer

    from hangar_runtime.engines.transformers_llm.token_bytes import token_text_and_bytes

    tokenizer = AutoTokenizer.from_pretrained(path)
    return {i: tuple(token_text_and_bytes(tokenizer, i)) for i in ids}
