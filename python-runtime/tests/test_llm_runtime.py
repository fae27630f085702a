"""The `transformers` engine end to end: one real runtime process serving the tiny
LLM, spoken to over the wire like the control plane does."""

import itertools
import shutil
import time
from pathlib import Path

import pytest

from conftest import short_tmpdir
from harness import ABORT, CHUNK, END, ERROR, RESULT, Runtime, load_spec

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


_ids = itertools.count(1)
GREEDY = {"temperature": 0}
USER = [{"role": "user", "content": "Tell me about the weather in Paris."}]
PROMPTS = ["Hello", "The quick brown fox", "Once upon a time", "What is the answer?",
           "Count the stars", "a b c", "Please say that again", "The runtime loads the model"]


def llm_spec(path: str, **extra) -> dict:
    spec = load_spec("transformers", path, model_type="LLM", model_ability=["chat", "generate", "tools"],
                     model_family="qwen2.5-instruct", context_length=4096)
    spec.update(extra)
    return spec


@pytest.fixture(scope="module")
def llm(tiny_llm):
    workdir = short_tmpdir()
    runtime = Runtime(workdir, "llm-0")
    # Closed even when the load fails: a Runtime left open holds a zmq context whose
    # collection later blocks (term() waits for its sockets), hanging the session.
    try:
        runtime.hello()
        runtime.progress, msg_type, runtime.ready = runtime.load(llm_spec(tiny_llm["path"]))
        assert msg_type == 0x04, f"expected READY, got {msg_type:#x} {runtime.ready}\n{runtime.stderr()}"
        yield runtime
    finally:
        runtime.close()
        shutil.rmtree(workdir, ignore_errors=True)


def chat(llm, messages=USER, stream=False, **config):
    call_id = next(_ids)
    kwargs = {"generate_config": {**GREEDY, **config}}
    if stream:
        return llm.stream(call_id, messages, engine_method="chat", **kwargs)
    return llm.ask(call_id, messages, engine_method="chat", **kwargs)


def generate(llm, prompt, **config):
    msg_type, body = llm.ask(next(_ids), prompt, engine_method="generate", generate_config={**GREEDY, **config})
    assert msg_type == RESULT, body
    return body["value"]


def collect(llm, call_ids, timeout=60.0) -> tuple[dict, list]:
    """Reads until every call has ended: (id -> its messages as (type, body), and
    the ids in the order their messages arrived)."""
    seen, arrivals = {i: [] for i in call_ids}, []
    open_ids, deadline = set(call_ids), time.monotonic() + timeout
    while open_ids:
        msg_type, body = llm.recv(timeout=max(0.1, deadline - time.monotonic()))
        seen[body["id"]].append((msg_type, body))
        arrivals.append(body["id"])
        if msg_type != CHUNK:
            open_ids.discard(body["id"])
    return seen, arrivals


def test_ready_reports_abilities_and_context(llm):
    assert llm.ready["engine"] == "transformers"
    assert llm.ready["abilities"] == ["chat", "generate", "tools"]
    assert llm.ready["description"] == {"context_length": 512}  # the model's own limit caps the 4096
    assert [p["stage"] for p in llm.progress][-1] == "load" and llm.progress[-1]["progress"] == 1.0


def test_a_loaded_llm_never_imported_scikit_learn(llm):
    # scikit-learn is installed here (the sklearn engine needs it), and transformers
    # imports it whenever it can: about 1.1 s of a start (engines/lean_imports.py).
    # Its compiled modules would be mapped into the process once imported.
    generate(llm, "Hello", max_tokens=2)
    maps = Path(f"/proc/{llm.process.pid}/maps").read_text()
    assert "/site-packages/torch/" in maps  # the check reads the right process
    assert "/site-packages/sklearn/" not in maps


def test_chat_runs_to_max_tokens_with_exact_usage(llm):
    msg_type, body = chat(llm, max_tokens=7)
    assert msg_type == RESULT, body
    value = body["value"]
    assert value["finish_reason"] == "length"
    usage = value["usage"]
    assert usage["completion_tokens"] == 7
    assert usage["prompt_tokens"] > 10  # the template's turn markers count too
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert "tool_calls" not in value


def test_stop_string_ends_the_text_just_before_it(llm):
    full = chat(llm, max_tokens=40)[1]["value"]["text"]
    stop = pick_stop(full)
    expected = full[:full.index(stop)]
    value = chat(llm, max_tokens=40, stop=["never in the text", stop])[1]["value"]
    assert (value["text"], value["finish_reason"]) == (expected, "stop")
    assert value["stop_sequence"] == stop  # which one ended it (Anthropic's stop_sequence)
    assert value["usage"]["completion_tokens"] < 40
    chunks, end_type, _ = chat(llm, stream=True, max_tokens=40, stop=stop)
    assert end_type == END
    assert "".join(c["text"] for c in chunks) == expected
    assert chunks[-1]["finish_reason"] == "stop" and chunks[-1]["stop_sequence"] == stop
    # Ended by its length, not by a stop string: none is named.
    assert "stop_sequence" not in chat(llm, max_tokens=40)[1]["value"]


def pick_stop(text: str) -> str:
    """Three printable ASCII characters from the middle of the text."""
    for start in range(len(text) // 2, len(text) - 3):
        candidate = text[start:start + 3]
        if all(32 < ord(c) < 127 for c in candidate) and text.index(candidate) > 0:
            return candidate
    raise AssertionError(f"no usable stop string in {text!r}")


def test_stream_chunks_add_up_to_the_non_stream_result(llm):
    whole = chat(llm, max_tokens=30)[1]["value"]
    chunks, end_type, _ = chat(llm, stream=True, max_tokens=30)
    assert end_type == END
    *deltas, last = chunks
    # The first CHUNK also says the prompt's size, before the answer's usage.
    assert set(deltas[0]) == {"text", "prompt_tokens"} and deltas[0]["prompt_tokens"] == whole["usage"]["prompt_tokens"]
    assert all(set(d) == {"text"} and d["text"] for d in deltas[1:])
    assert "".join(d["text"] for d in deltas) == whole["text"]
    assert last["text"] == "" and last["finish_reason"] == "length"
    assert last["usage"] == whole["usage"]


def test_eight_concurrent_streams_each_match_their_solo_output(llm):
    solo = [generate(llm, p, max_tokens=24)["text"] for p in PROMPTS]
    call_ids = [next(_ids) for _ in PROMPTS]
    for call_id, prompt in zip(call_ids, PROMPTS):
        llm.call(call_id, prompt, engine_method="generate", stream=True, generate_config={**GREEDY, "max_tokens": 24})
    seen, arrivals = collect(llm, call_ids)
    for call_id, expected in zip(call_ids, solo):
        messages = seen[call_id]
        assert [t for t, _ in messages] == [CHUNK] * (len(messages) - 1) + [END]
        assert "".join(b["value"]["text"] for _, b in messages[:-1]) == expected
        assert messages[-2][1]["value"]["usage"]["completion_tokens"] == 24
    # They ran as one batch: the last call had sent its first CHUNK before the first call ended.
    first_end = len(arrivals) - arrivals[::-1].index(call_ids[0]) - 1
    assert arrivals.index(call_ids[-1]) < first_end


def test_abort_mid_stream_answers_aborted_and_the_next_call_is_served(llm):
    call_id = next(_ids)
    llm.call(call_id, USER, engine_method="chat", stream=True, generate_config={**GREEDY, "max_tokens": 450})
    msg_type, body = llm.recv()
    assert (msg_type, body["id"]) == (CHUNK, call_id)
    llm.send_control(ABORT, {"id": call_id})
    while True:
        msg_type, body = llm.recv()
        assert body["id"] == call_id
        if msg_type != CHUNK:
            break
    assert (msg_type, body["kind"]) == (ERROR, "aborted")
    assert chat(llm, max_tokens=3)[1]["value"]["usage"]["completion_tokens"] == 3


def test_generate_with_echo_starts_with_the_prompt(llm):
    plain = generate(llm, "Once upon a time", max_tokens=8)
    echoed = generate(llm, "Once upon a time", max_tokens=8, echo=True)
    assert echoed["text"] == "Once upon a time" + plain["text"]
    assert echoed["usage"] == plain["usage"]


def test_tools_reach_the_template(llm):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    plain = chat(llm, max_tokens=1)[1]["value"]["usage"]["prompt_tokens"]
    call_id = next(_ids)
    msg_type, body = llm.ask(call_id, USER, engine_method="chat", tools=tools, generate_config={**GREEDY, "max_tokens": 1})
    assert msg_type == RESULT, body
    assert body["value"]["usage"]["prompt_tokens"] > plain + 20
    # Forcing a call needs constrained decoding, which this engine lacks: refused, named.
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        msg_type, body = llm.ask(next(_ids), USER, engine_method="chat", tools=tools, tool_choice=choice,
                                 generate_config=GREEDY)
        assert (msg_type, body["kind"], body["param"]) == (ERROR, "invalid", "tool_choice"), body


@pytest.mark.parametrize("method, args, kwargs, fragment", [
    ("chat", [USER], {"generate_config": {"max_tokens": 0}}, "max_tokens"),
    ("chat", [USER], {"generate_config": {"temperature": "hot"}}, "temperature"),
    ("chat", ["not a list"], {}, "messages"),
    ("chat", [USER], {"surprise": 1}, "surprise"),
    ("generate", [["not", "a", "string"]], {}, "prompt"),
    ("generate", ["word " * 600], {}, "context"),
])
def test_bad_requests_are_invalid(llm, method, args, kwargs, fragment):
    msg_type, body = llm.ask(next(_ids), *args, engine_method=method, **kwargs)
    assert (msg_type, body["kind"]) == (ERROR, "invalid"), body
    assert fragment in body["message"]
    # A generate_config field at fault is named in param, as the HTTP request spells it.
    if fragment in ("max_tokens", "temperature"):
        assert body["param"] == fragment


def test_an_llm_registered_with_embed_does_not_claim_it():
    # No LLM engine here embeds: claimed, /v1/embeddings passed it on and the engine
    # answered "no method 'embed'" with no field named.
    from hangar_runtime.engines.transformers_llm.engine import _abilities

    assert _abilities(["chat", "generate", "embed"], has_template=True) == ("chat", "generate")
