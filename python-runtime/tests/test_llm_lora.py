"""LoRA adapters on the Transformers engine: loaded at launch with peft, picked per
request by lora_name, and mixed with the base model in one batch."""

import pytest

pytest.importorskip("peft")

from hangar_runtime.engines.transformers_llm.engine import TransformersLLMEngine  # noqa: E402
from hangar_runtime.errors import InvalidModel  # noqa: E402

from test_llm_batching import ListSink  # noqa: E402

GREEDY = {"max_tokens": 24, "temperature": 0}
PROMPT = "Tell me a story about the robot"


@pytest.fixture(scope="module")
def engine(tiny_lora):
    engine = TransformersLLMEngine()
    lora_list = [{"lora_name": name, "local_path": path} for name, path in tiny_lora["adapters"].items()]
    engine.load({"model_uri": tiny_lora["path"], "engine_kwargs": {}, "model_ability": ["generate", "chat"],
                 "peft_model_config": {"lora_list": lora_list}}, lambda *a: None)
    return engine


def solo(engine, lora):
    return engine.generate(PROMPT, generate_config={**GREEDY, "lora_name": lora})["text"]


def test_each_adapter_answers_its_own_way_and_none_is_the_base(engine, tiny_lora):
    base_alone = TransformersLLMEngine()
    base_alone.load({"model_uri": tiny_lora["path"], "engine_kwargs": {}, "model_ability": ["generate"]}, lambda *a: None)
    plain = base_alone.generate(PROMPT, generate_config=GREEDY)["text"]
    texts = {lora: solo(engine, lora) for lora in (None, "a", "b")}
    assert texts[None] == plain
    assert len(set(texts.values())) == 3
    assert engine.describe()["lora_names"] == ["a", "b"]


def test_adapters_and_the_base_share_one_batch_and_answer_as_alone(engine):
    expected = {lora: solo(engine, lora) for lora in (None, "a", "b")}
    batcher = engine.scheduler()
    sinks = []
    for i, lora in enumerate([None, "a", "b", "a", None, "b"]):
        sink = ListSink(i, stream=i % 2 == 0)
        batcher.submit("generate", [PROMPT], {"generate_config": {**GREEDY, "lora_name": lora}}, sink)
        sinks.append((lora, sink))
    steps = 0
    while batcher.has_work():
        batcher.step()
        steps += 1
        assert steps < 500
    for lora, sink in sinks:
        assert sink.text() == expected[lora], lora


def test_a_prompt_is_scored_by_the_adapter_that_answers(engine):
    """echo with logprobs: the prompt's own tokens scored through the request's adapter, as its
    generated tokens are (the scoring pass is apart from the batch, prompt_scoring.py)."""
    config = {"max_tokens": 2, "temperature": 0, "echo": True, "logprobs": True, "top_logprobs": 1}
    scored = {lora: engine.generate(PROMPT, generate_config={**config, "lora_name": lora})["logprobs"] for lora in (None, "a")}
    assert len(scored[None]) == len(scored["a"])
    assert [e["logprob"] for e in scored[None][1:]] != pytest.approx([e["logprob"] for e in scored["a"][1:]], abs=1e-3)
    # Each is the model's own forward pass through that adapter (peft's adapter_names).
    import torch
    loaded = engine.scheduler()._loaded
    ids = loaded.tokenizer(PROMPT)["input_ids"]
    for lora, entries in scored.items():
        with torch.no_grad():
            logits = loaded.model(input_ids=torch.tensor([ids]), adapter_names=[lora or "__base__"]).logits[0].float()
        expected = torch.log_softmax(logits, dim=-1)
        assert [e["logprob"] for e in entries[1:len(ids)]] == pytest.approx(
            [float(expected[i - 1, ids[i]]) for i in range(1, len(ids))], abs=1e-4)


def test_an_unknown_adapter_is_refused_naming_those_that_exist(engine):
    with pytest.raises(ValueError, match=r"lora_name: c is not a LoRA adapter of this model; its adapters: a, b"):
        engine.generate(PROMPT, generate_config={**GREEDY, "lora_name": "c"})


def test_a_missing_or_malformed_adapter_fails_the_launch_naming_it(tiny_lora, tmp_path):
    spec = {"model_uri": tiny_lora["path"], "engine_kwargs": {}, "model_ability": ["generate"]}
    with pytest.raises(InvalidModel, match=r"lora_list.0 \(LoRA adapter x at .*nowhere\) cannot be loaded"):
        TransformersLLMEngine().load({**spec, "peft_model_config": {"lora_list": [
            {"lora_name": "x", "local_path": str(tmp_path / "nowhere")}]}}, lambda *a: None)
    (tmp_path / "adapter_config.json").write_text("{not json")
    with pytest.raises(InvalidModel, match=r"lora_list.1 \(LoRA adapter bad"):
        TransformersLLMEngine().load({**spec, "peft_model_config": {"lora_list": [
            {"lora_name": "a", "local_path": tiny_lora["adapters"]["a"]},
            {"lora_name": "bad", "local_path": str(tmp_path)}]}}, lambda *a: None)
    with pytest.raises(InvalidModel, match="needs lora_name and local_path"):
        TransformersLLMEngine().load({**spec, "peft_model_config": {"lora_list": [{"lora_name": "a"}]}}, lambda *a: None)
