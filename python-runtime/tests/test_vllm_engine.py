"""The vllm engine. Its sampling mapping is checked everywhere; the engine itself
only where vLLM imports (a CUDA host) — elsewhere those tests are skipped and say so."""

import importlib.util

import pytest

from hangar_runtime.engines.transformers_llm.generate_config import parse_generate_config
from hangar_runtime.engines.vllm_llm.sampling_params import sampling_kwargs

HAS_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(not HAS_VLLM, reason="vLLM is not installed here (it needs a CUDA host); "
                                                     "the vllm engine's serving tests run only where it imports")


def test_sampling_kwargs_map_our_config_to_vllm_names():
    config = parse_generate_config({"max_tokens": 50, "temperature": 0, "top_k": 0, "seed": 7, "stop": "END",
                                    "stop_token_ids": [3], "repetition_penalty": 1.1})
    kwargs = sampling_kwargs(config, prompt_tokens=10, context_length=40)
    assert kwargs == {"max_tokens": 30, "temperature": 0.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.1,
                      "stop": ["END"], "stop_token_ids": [3], "include_stop_str_in_output": False, "seed": 7}


def test_sampling_kwargs_pass_ignore_eos_only_when_asked():
    assert "ignore_eos" not in sampling_kwargs(parse_generate_config({"ignore_eos": False}), prompt_tokens=1, context_length=8)
    assert sampling_kwargs(parse_generate_config({"ignore_eos": True}), prompt_tokens=1, context_length=8)["ignore_eos"] is True


def test_sampling_kwargs_pass_min_p_and_min_tokens_held_to_max_tokens():
    kwargs = sampling_kwargs(parse_generate_config({"min_p": 0.05, "min_tokens": 50, "max_tokens": 20}), prompt_tokens=1, context_length=64)
    assert (kwargs["min_p"], kwargs["min_tokens"], kwargs["max_tokens"]) == (0.05, 20, 20)
    assert "min_p" not in sampling_kwargs(parse_generate_config({}), prompt_tokens=1, context_length=8)


def test_sampling_kwargs_refuse_a_prompt_that_fills_the_context():
    with pytest.raises(ValueError, match="no room"):
        sampling_kwargs(parse_generate_config({}), prompt_tokens=40, context_length=40)


@needs_vllm
def test_vllm_engine_serves_the_tiny_model(tiny_llm):
    from hangar_runtime.engines.vllm_llm.engine import VllmEngine

    engine = VllmEngine()
    engine.load({"model_uri": tiny_llm["path"], "engine_kwargs": {"gpu_memory_utilization": 0.2},
                 "model_ability": ["chat", "generate"], "context_length": 512}, lambda *a: None)
    scheduler = engine.scheduler()

    class Sink:
        call_id, stream, alone, closed, value = 1, False, True, False, None

        def chunk(self, value):
            pass

        def finish(self, value=None):
            self.value, self.closed = value, True

        def fail(self, exc, kind=None):
            raise exc

    sink = Sink()
    scheduler.submit("generate", ["Hello"], {"generate_config": {"max_tokens": 8, "temperature": 0}}, sink)
    import time
    deadline = time.time() + 120
    while not sink.closed and time.time() < deadline:
        scheduler.step()
        time.sleep(scheduler.wait_before_step())
    assert sink.closed
    assert sink.value["usage"]["completion_tokens"] <= 8
    assert sink.value["finish_reason"] in ("stop", "length")
