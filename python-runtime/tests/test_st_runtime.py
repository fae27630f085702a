"""The `sentence_transformers` engine end to end: real runtime processes serving
the tiny embedder and cross-encoder, spoken to over the wire like the control
plane does. Batching is seen in the runtime's debug log ("one forward pass: N
calls"), so no assertion here depends on timing beyond calls sent back to back
sharing a 150 ms window."""

import itertools
import shutil
import time

import numpy as np
import pytest

from conftest import short_tmpdir
from harness import ABORT, ERROR, LOAD_FAILED, READY, RESULT, Runtime, load_spec

# Starts real processes (runtimes, servers or a cluster): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


_ids = itertools.count(1)
WINDOW_MS = 150
DEBUG_LOG = {"HANGAR_RUNTIME_LOG_LEVEL": "DEBUG"}
HUB_ID = "hangar-tests/not-a-cached-embedder"


def encoder_spec(model_type: str, path: str, **engine_kwargs) -> dict:
    return load_spec("sentence_transformers", path, model_type=model_type,
                     engine_kwargs={"batch_window_ms": WINDOW_MS, **engine_kwargs})


@pytest.fixture(scope="module")
def embedder(tiny_embedder):
    workdir = short_tmpdir()
    runtime = Runtime(workdir, "embed-0", env=DEBUG_LOG)
    # Closed even when the load fails: a Runtime left open holds a zmq context whose
    # collection later blocks (term() waits for its sockets), hanging the session.
    try:
        runtime.hello()
        runtime.progress, msg_type, runtime.ready = runtime.load(encoder_spec("embedding", tiny_embedder["path"]))
        assert msg_type == READY, f"expected READY, got {msg_type:#x} {runtime.ready}\n{runtime.stderr()}"
        yield runtime
    finally:
        runtime.close()
        shutil.rmtree(workdir, ignore_errors=True)


def send_all(runtime, calls: list[tuple]) -> dict:
    """Sends (args, kwargs) CALLs back to back; returns id -> (type, body) of each answer."""
    ids = []
    for args, kwargs in calls:
        ids.append(next(_ids))
        runtime.call(ids[-1], *args, engine_method=kwargs.pop("method", "embed"), **kwargs)
    answers = {}
    while len(answers) < len(ids):
        msg_type, body = runtime.recv()
        answers[body["id"]] = (msg_type, body)
    return [answers[i] for i in ids]


def passes_logged(runtime, since: int) -> list[str]:
    log = runtime.stderr()[since:]
    return [line.split("one forward pass: ", 1)[1] for line in log.splitlines() if "one forward pass: " in line]


def test_ready_names_the_ability_and_the_model_limits(embedder, tiny_embedder):
    assert embedder.ready["engine"] == "sentence_transformers"
    assert embedder.ready["abilities"] == ["embed"]
    assert embedder.ready["description"] == {"dimensions": tiny_embedder["dimensions"],
                                             "max_tokens": tiny_embedder["max_tokens"]}
    assert [p["stage"] for p in embedder.progress][-1] == "load"


def test_embed_gives_one_unit_vector_per_input(embedder, tiny_embedder):
    msg_type, body = embedder.ask(next(_ids), ["the quick brown fox", "hello", ""], engine_method="embed")
    assert msg_type == RESULT, body
    vectors = np.asarray(body["value"]["embeddings"])
    assert vectors.shape == (3, tiny_embedder["dimensions"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert body["value"]["prompt_tokens"] == 6 + 3 + 2  # [CLS] ... [SEP] around each


def test_calls_in_one_window_share_a_forward_pass_and_match_solo_results(embedder):
    texts = ["the quick brown fox", "a lazy dog", "fox " * 90, "hello"]
    solo = [send_all(embedder, [([[t]], {})])[0][1]["value"]["embeddings"][0] for t in texts]
    since = len(embedder.stderr())
    answers = send_all(embedder, [([[t]], {}) for t in texts])
    assert all(msg_type == RESULT for msg_type, _ in answers), answers
    assert passes_logged(embedder, since) == ["4 calls, 4 inputs"]
    together = np.asarray([body["value"]["embeddings"][0] for _, body in answers])
    assert np.abs(together - np.asarray(solo)).max() < 1e-5


def test_an_over_long_call_fails_alone_and_its_window_mates_succeed(embedder, tiny_embedder):
    since = len(embedder.stderr())
    long = "fox " * (tiny_embedder["max_tokens"] * 2)
    answers = send_all(embedder, [([["hello", "world"]], {}), ([["ok", long]], {"truncate": False}),
                                  ([[long]], {"dimensions": 4})])
    (ok1, first), (bad, error), (ok2, last) = answers
    assert (ok1, bad, ok2) == (RESULT, ERROR, RESULT), answers
    assert error["kind"] == "invalid"
    assert error["message"].startswith("input 1 has 130 tokens, more than the model's 64")
    assert len(first["value"]["embeddings"]) == 2
    # Cut to max_tokens by default, and to the asked dimensions.
    assert last["value"]["prompt_tokens"] == tiny_embedder["max_tokens"]
    assert len(last["value"]["embeddings"][0]) == 4
    assert passes_logged(embedder, since) == ["2 calls, 3 inputs"]


def test_token_ids_travel_and_bad_arguments_are_invalid(embedder):
    answers = send_all(embedder, [([[[2, 17, 19, 3]]], {}), ([["x"]], {"dimensions": 999}),
                                  ([["x"]], {"normalize": True}), ([[[1, 2**40]]], {})])
    assert answers[0][0] == RESULT and len(answers[0][1]["value"]["embeddings"]) == 1
    for msg_type, body in answers[1:]:
        assert (msg_type, body["kind"]) == (ERROR, "invalid"), body
    assert "dimensions" in answers[1][1]["message"] and "normalize" in answers[2][1]["message"]
    # The field at fault travels as the ERROR's param (docs/runtime-protocol.md, "Calls").
    assert answers[1][1]["param"] == "dimensions"
    # An id past the vocabulary names `input` too, and says where ids must come from.
    assert answers[3][1]["param"] == "input" and "check_embedding_ctx_length=False" in answers[3][1]["message"]


def test_a_call_aborted_in_its_window_is_not_encoded(spawn, tiny_embedder):
    # A fresh runtime with nothing else waiting, so the ABORT surely lands inside the window.
    runtime = spawn("embed-abort-0", env=DEBUG_LOG)
    runtime.hello()
    runtime.load_ok(encoder_spec("embedding", tiny_embedder["path"]))
    since = len(runtime.stderr())
    call_id = next(_ids)
    runtime.call(call_id, ["hello"], engine_method="embed")
    runtime.send_control(ABORT, {"id": call_id})
    msg_type, body = runtime.recv()
    assert (msg_type, body["id"], body.get("kind")) == (ERROR, call_id, "aborted"), body
    assert passes_logged(runtime, since) == []


def test_cross_encoder_serves_rerank(spawn, tiny_cross_encoder):
    runtime = spawn("rerank-0", env=DEBUG_LOG)
    runtime.hello()
    ready = runtime.load_ok(encoder_spec("rerank", tiny_cross_encoder["path"]))
    assert ready["abilities"] == ["rerank"]
    assert ready["description"] == {"max_tokens": tiny_cross_encoder["max_tokens"]}
    documents = ["a fox in the forest", "stock market news", "the quick brown fox jumps", "recipes for bread"]
    answers = send_all(runtime, [(["quick fox", documents], {"method": "rerank"}),
                                 (["quick fox", documents[2:]], {"method": "rerank"}),
                                 (["fox", ["fox " * 70]], {"method": "rerank", "truncate": False})])
    (t1, all_docs), (t2, some), (t3, error) = answers
    assert (t1, t2, t3) == (RESULT, RESULT, ERROR), answers
    scores = all_docs["value"]["scores"]
    assert len(scores) == 4 and max(range(4), key=scores.__getitem__) == 2
    assert some["value"]["scores"] == pytest.approx(scores[2:], abs=1e-5)
    assert all_docs["value"]["input_tokens"] > some["value"]["input_tokens"] > 0
    assert error["kind"] == "invalid" and error["message"].startswith("document 0 with the query has 74 tokens")
    assert passes_logged(runtime, 0) == ["2 calls, 6 inputs"]


def test_hub_model_not_in_cache_fails_fast_naming_it(spawn, workdir):
    runtime = spawn(env={"HF_HUB_OFFLINE": "1"})
    runtime.hello()
    spec = load_spec("sentence_transformers", None, model_type="embedding", model_id=HUB_ID,
                     model_hub="huggingface", cache_dir=str(workdir))
    del spec["model_uri"]
    started = time.monotonic()
    _, msg_type, body = runtime.load(spec)
    assert msg_type == LOAD_FAILED, body
    assert time.monotonic() - started < 5
    assert body["kind"] == "invalid" and HUB_ID in body["message"] and "model_path" in body["message"]
    assert runtime.wait_exit() == 3
