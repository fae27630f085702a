"""The vllm engine adapter's refusals, failures and limits against tests/vllm_call_double
(README there: it proves well-formed calls only): vLLM's client errors, its own failed
finishes, the context it serves, and the LoRA ranks it takes."""

import json
import shutil
from pathlib import Path

import pytest

from harness import ERROR, SHUTDOWN
from test_vllm_calls import DOUBLE, load_spec, stream

# Starts real processes (runtimes): not in `npm run test:quick`.
pytestmark = pytest.mark.integration


def test_vllm_refusals_are_the_requests_fault_and_its_failures_are_errors_not_short_answers(spawn, workdir, tiny_llm):
    """vLLM 0.27+ refuses a request with VLLMValidationError, no longer a ValueError: still
    "invalid" (400), not "internal". A request vLLM finishes with "error" or "abort" (its own
    failure; the double injects it, as real vLLM does only under faults) is an ERROR, not an
    answer cut short with finish_reason "stop"."""
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE)})
    rt.hello()
    rt.load_ok(load_spec(tiny_llm["path"]))
    chunks, end_type, body = stream(rt, 1, "generate", "Hi", max_tokens=2, logit_bias={"99999999": 1.0})
    assert (end_type, body["kind"], chunks) == (ERROR, "invalid", [])
    assert "out-of-vocab" in body["message"]
    rt.send_control(SHUTDOWN, {})
    rt.wait_exit()
    for reason, says in (("error", "try again"), ("abort", "aborted this request itself")):
        rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_FINISH": reason})
        rt.hello()
        rt.load_ok(load_spec(tiny_llm["path"]))
        chunks, end_type, body = stream(rt, 1, "generate", "Hi", max_tokens=3)
        assert (end_type, body["kind"]) == (ERROR, "internal") and says in body["message"], reason
        assert "".join(c["text"] for c in chunks) == "t0 t1 t2 "  # what came, the last step's text included
        rt.send_control(SHUTDOWN, {})
        rt.wait_exit()


def test_the_context_is_vllms_max_model_len_and_a_lora_rank_is_one_vllm_takes(spawn, workdir, tiny_llm, tiny_lora):
    """Without a context_length, the context is the one vLLM serves (its model config's
    max_model_len, here the model's max_position_embeddings), not the tokenizer's
    model_max_length, often a 1e30 placeholder."""
    config = json.loads((Path(tiny_llm["path"]) / "config.json").read_text())
    rt = spawn("v-0", env={"PYTHONPATH": str(DOUBLE)})
    rt.hello()
    ready = rt.load_ok({**load_spec(tiny_llm["path"]), "context_length": None})
    assert ready["description"]["context_length"] == config["max_position_embeddings"]
    rt.send_control(SHUTDOWN, {})
    rt.wait_exit()

    # An adapter of rank 24 (a copy of a real one, its config saying so): vLLM takes only
    # max_lora_rank 1, 8, 16, 32, ... (its MaxLoRARanks), so the launch asks for 32.
    adapter = workdir / "rank-24"
    shutil.copytree(tiny_lora["adapters"]["a"], adapter)
    adapter_config = json.loads((adapter / "adapter_config.json").read_text())
    (adapter / "adapter_config.json").write_text(json.dumps({**adapter_config, "r": 24}))
    calls_log = workdir / "vllm-rank-calls.jsonl"
    rt = spawn("v-1", env={"PYTHONPATH": str(DOUBLE), "HANGAR_VLLM_DOUBLE_LOG": str(calls_log)})
    rt.hello()
    rt.load_ok({**load_spec(tiny_lora["path"]), "peft_model_config": {"lora_list": [{"lora_name": "r24", "local_path": str(adapter)}]}})
    rt.send_control(SHUTDOWN, {})
    rt.wait_exit()
    started = next(e for e in map(json.loads, calls_log.read_text().splitlines()) if e["event"] == "from_engine_args")
    assert started["max_lora_rank"] == 32
