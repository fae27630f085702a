"""Token-id prompts, the prompt's own log-probabilities (echo with logprobs), the
tokenizer's methods and the request's stop token, on the LLM engine in this process,
driving its batcher step by step."""

import re

import pytest

torch = pytest.importorskip("torch")

# The batching tests' fixtures: the tiny Llama loaded once for this module, and a
# batcher that must end each test with no work left.
from test_llm_batching import GREEDY, PROMPTS, ListSink, batcher, engine  # noqa: E402,F401


# ---- token-id prompts, and the prompt's own log-probabilities (echo with logprobs) ----

def _run(batcher, calls: list[tuple[object, dict, bool]]) -> list[ListSink]:
    sinks = []
    for i, (prompt, config, stream) in enumerate(calls):
        sinks.append(ListSink(i, stream=stream))
        batcher.submit("generate", [prompt], {"generate_config": config}, sinks[-1])
    steps = 0
    while batcher.has_work():
        batcher.step()
        steps += 1
        assert steps < 500
    return sinks


def test_a_token_id_prompt_is_given_to_the_model_as_it_is(engine, batcher):
    tokenizer = engine.scheduler()._loaded.tokenizer
    ids = tokenizer(PROMPTS[2])["input_ids"]
    by_text, by_ids, echoed = _run(batcher, [(PROMPTS[2], GREEDY, False), (ids, GREEDY, True),
                                             (ids, {**GREEDY, "max_tokens": 3, "echo": True}, False)])
    assert by_ids.text() == by_text.text() and by_ids.chunks[0]["prompt_tokens"] == len(ids)
    assert by_ids.value["usage"]["prompt_tokens"] == by_text.value["usage"]["prompt_tokens"] == len(ids)
    # echo gives the ids' text back (special tokens as they are), then the answer.
    assert echoed.text() == tokenizer.decode(ids) + by_text.text()[:len(echoed.text()) - len(tokenizer.decode(ids))]
    vocab = len(tokenizer)
    for bad, fragment in (([], "empty"), ([1, vocab], f"token id {vocab} (at 1) is outside"), ([1, -2], "outside"),
                          ([1, "2"], "prompt[1] must be a token id"), ([True], "must be a token id")):
        with pytest.raises(ValueError, match=re.escape(fragment)) as caught:
            engine.generate(bad, generate_config=GREEDY)
        assert caught.value.param == "prompt"


@pytest.mark.parametrize("stream", [False, True])
def test_echo_with_logprobs_scores_the_prompts_own_tokens(engine, batcher, stream, monkeypatch):
    from hangar_runtime.engines.transformers_llm import prompt_scoring
    from hangar_runtime.engines.transformers_llm.token_bytes import token_text_and_bytes
    monkeypatch.setattr(prompt_scoring, "CHUNK_TOKENS", 4)  # several chunks, each over the cache of the last
    loaded = engine.scheduler()._loaded
    prompt = PROMPTS[4]
    ids = loaded.tokenizer(prompt)["input_ids"]
    assert len(ids) > 2 * prompt_scoring.CHUNK_TOKENS
    config = {**GREEDY, "max_tokens": 3, "echo": True, "logprobs": True, "top_logprobs": 2}
    # A plain call in the same batch is not changed by its neighbour's scoring.
    scored, plain = _run(batcher, [(prompt, config, stream), (PROMPTS[1], {**GREEDY, "max_tokens": 5}, False)])
    assert plain.value["text"] == engine.generate(PROMPTS[1], generate_config={**GREEDY, "max_tokens": 5})["text"]
    entries = [e for c in scored.chunks for e in c.get("logprobs", [])] if stream else scored.value["logprobs"]
    generated = scored.value["usage"]["completion_tokens"]
    assert len(entries) == len(ids) + generated
    first = entries[0]
    assert (first["token"], first["logprob"], first["top_logprobs"]) == (token_text_and_bytes(loaded.tokenizer, ids[0])[0], None, None)
    with torch.no_grad():
        logprobs = torch.log_softmax(loaded.model(torch.tensor([ids])).logits[0].float(), dim=-1)
    for place in range(1, len(ids)):
        entry, token = entries[place], ids[place]
        assert entry["token"] == token_text_and_bytes(loaded.tokenizer, token)[0]
        assert entry["logprob"] == pytest.approx(float(logprobs[place - 1, token]), abs=1e-4)
        best = torch.topk(logprobs[place - 1], 2)
        assert [t["token"] for t in entry["top_logprobs"]] == [token_text_and_bytes(loaded.tokenizer, i)[0] for i in best.indices.tolist()]
        assert [t["logprob"] for t in entry["top_logprobs"]] == pytest.approx(best.values.tolist(), abs=1e-4)
    # The generated tokens' entries follow, as without echo.
    alone = engine.generate(prompt, generate_config={**config, "echo": False})
    assert [e["token"] for e in entries[len(ids):]] == [e["token"] for e in alone["logprobs"]]
    text = "".join(c["text"] for c in scored.chunks) if stream else scored.value["text"]
    assert text == prompt + alone["text"]


def test_echo_with_logprobs_of_a_one_token_prompt_and_of_token_ids(engine):
    loaded = engine.scheduler()._loaded
    ids = loaded.tokenizer(PROMPTS[1])["input_ids"]
    config = {**GREEDY, "max_tokens": 1, "echo": True, "logprobs": 0}
    by_ids = engine.generate(ids, generate_config=config)
    by_text = engine.generate(PROMPTS[1], generate_config=config)
    assert by_ids["logprobs"] == by_text["logprobs"] and len(by_ids["logprobs"]) == len(ids) + 1
    assert all(e["top_logprobs"] == [] for e in by_ids["logprobs"][1:])
    single = engine.generate(ids[:1], generate_config=config)["logprobs"]
    assert len(single) == 2 and single[0]["logprob"] is None and single[1]["logprob"] is not None


# ---- the tokenizer's methods (vLLM's /tokenize, /detokenize, /tokenizer_info) ----

def test_tokenizer_methods_answer_as_the_models_tokenizer_and_its_chat(engine):
    loaded = engine.scheduler()._loaded
    tokenizer, methods = loaded.tokenizer, engine.methods()
    text = "The quick brown fox"
    assert methods["tokenize"](text)["tokens"] == tokenizer(text)["input_ids"]
    plain = methods["tokenize"](text, add_special_tokens=False, return_token_strs=True)
    assert plain["tokens"] == tokenizer(text, add_special_tokens=False)["input_ids"]
    assert plain["token_strs"] == tokenizer.convert_ids_to_tokens(plain["tokens"])
    assert plain["max_model_len"] == engine.describe()["context_length"]
    # A chat's tokens are the prompt its chat call counts.
    messages = [{"role": "user", "content": "Hello there"}]
    chat = methods["tokenize"](messages)["tokens"]
    assert len(chat) == methods["count_tokens"](messages)["prompt_tokens"]
    assert methods["detokenize"](plain["tokens"])["prompt"] == tokenizer.decode(plain["tokens"])
    assert methods["detokenize"]([])["prompt"] == ""
    info = methods["tokenizer_info"]()
    assert (info["eos_token"], info["bos_token"]) == (tokenizer.eos_token, tokenizer.bos_token)
    assert info["model_max_length"] == plain["max_model_len"] and info["chat_template"]
    for bad, field in (([len(tokenizer)], "tokens"), ([1, -1], "tokens"), ("12", "tokens")):
        with pytest.raises(ValueError) as refused:
            methods["detokenize"](bad)
        assert refused.value.param == field
    with pytest.raises(ValueError) as refused:
        methods["tokenize"](messages, add_special_tokens=True)
    assert refused.value.param == "add_special_tokens"


def test_the_requests_own_stop_token_is_named_as_vllms_stop_reason(engine):
    loaded = engine.scheduler()._loaded
    ids = loaded.tokenizer(PROMPTS[1])["input_ids"]
    generated = loaded.model.generate(torch.tensor([ids]), max_new_tokens=4, do_sample=False)[0, len(ids):].tolist()
    stop = generated[1]
    assert stop not in generated[:1]
    cut = engine.generate(PROMPTS[1], generate_config={**GREEDY, "max_tokens": 4, "stop_token_ids": [stop]})
    assert (cut["finish_reason"], cut["stop_token_id"], cut["usage"]["completion_tokens"]) == ("stop", stop, 2)
    assert "stop_token_id" not in engine.generate(PROMPTS[1], generate_config={**GREEDY, "max_tokens": 2})


def test_a_token_id_list_that_cannot_fit_is_refused_by_its_length_before_its_ids_are_read(engine):
    context = engine.describe()["context_length"]
    # Ids past the vocabulary too: the length is what is refused, first.
    with pytest.raises(ValueError, match="leaves no room"):
        engine.generate([10 ** 9] * context, generate_config=GREEDY)
