"""The LLM engine in this process, driving its batcher step by step: batched
output equals solo output, admission respects max_batch_size, and the token-level
rules (end tokens, sampling, tool calls in a stream) hold."""

import re

import pytest

torch = pytest.importorskip("torch")

from hangar_runtime.engines.transformers_llm.engine import TransformersLLMEngine  # noqa: E402
from hangar_runtime.engines.transformers_llm.generate_config import GenerateConfig  # noqa: E402
from hangar_runtime.engines.transformers_llm.sampling import Sampler, keep_min_p, keep_top_k, keep_top_p  # noqa: E402
from hangar_runtime.engines.transformers_llm.sequence import Request, Sequence  # noqa: E402

PROMPTS = ["Hello", "The quick brown fox jumps", "Tell me a story about the robot and the stars, please",
           "a", "What is the weather like in Paris today? It is sunny and warm", "x y z",
           "count one two three", "forty two"]
GREEDY = {"max_tokens": 40, "temperature": 0}


class ListSink:
    def __init__(self, call_id: int, stream: bool):
        self.call_id, self.stream, self.alone = call_id, stream, False
        self.closed = False
        self.chunks: list = []
        self.value = None

    def chunk(self, value):
        self.chunks.append(value)

    def finish(self, value=None):
        if self.stream and value is not None:
            self.chunks.append(value)
        self.value, self.closed = value, True

    def fail(self, exc, kind=None):
        self.value, self.closed = ("error", kind, exc), True

    def text(self) -> str:
        return "".join(c["text"] for c in self.chunks) if self.stream else self.value["text"]


@pytest.fixture(scope="module")
def engine(tiny_llm):
    engine = TransformersLLMEngine()
    engine.load({"model_uri": tiny_llm["path"], "engine_kwargs": {}, "model_ability": ["generate", "chat"]},
                lambda *a: None)
    return engine


@pytest.fixture(scope="module")
def solo(engine):
    """Each prompt's greedy text, generated alone."""
    return [engine.generate(p, generate_config=GREEDY)["text"] for p in PROMPTS]


@pytest.fixture
def batcher(engine):
    batcher = engine.scheduler()
    yield batcher
    batcher.join_caches, batcher.max_batch_size = True, 8
    assert not batcher.has_work()


def run_staggered(batcher, every: int, stream_every_other: bool = True) -> list[ListSink]:
    """Submits one prompt every `every` steps, so calls join a batch already running."""
    sinks, pending, steps = [], list(enumerate(PROMPTS)), 0
    while pending or batcher.has_work():
        if pending and steps % every == 0:
            i, prompt = pending.pop(0)
            sinks.append(ListSink(i, stream=stream_every_other and i % 2 == 0))
            batcher.submit("generate", [prompt], {"generate_config": GREEDY}, sinks[-1])
        batcher.step()
        steps += 1
        assert steps < 2000
    return sinks


def test_solo_greedy_matches_transformers_generate(engine, solo):
    loaded = engine.scheduler()._loaded
    for prompt, text in zip(PROMPTS[:3], solo):
        ids = loaded.tokenizer(prompt)["input_ids"]
        out = loaded.model.generate(torch.tensor([ids]), max_new_tokens=40, do_sample=False)
        assert text == loaded.tokenizer.decode(out[0, len(ids):], skip_special_tokens=True)


@pytest.mark.parametrize("join_caches", [True, False], ids=["joined-cache", "rebuilt-cache"])
@pytest.mark.parametrize("every", [1, 3])
def test_batched_greedy_output_equals_solo(batcher, solo, join_caches, every):
    batcher.join_caches = join_caches
    sinks = run_staggered(batcher, every)
    assert {s.call_id: s.text() for s in sinks} == dict(enumerate(solo))
    assert all(s.value["finish_reason"] == "length" for s in sinks)


def test_all_at_once_beyond_max_batch_size(batcher, solo):
    batcher.max_batch_size = 3
    sinks = [ListSink(i, stream=False) for i in range(len(PROMPTS))]
    for sink, prompt in zip(sinks, PROMPTS):
        batcher.submit("generate", [prompt], {"generate_config": GREEDY}, sink)
    widest = 0
    while batcher.has_work():
        batcher.step()
        widest = max(widest, len(batcher._running))
    assert widest == 3
    assert [s.text() for s in sinks] == solo


def test_closed_sink_leaves_the_batch_and_others_go_on(batcher, solo):
    sinks = [ListSink(i, stream=True) for i in range(3)]
    for sink, prompt in zip(sinks, PROMPTS):
        batcher.submit("generate", [prompt], {"generate_config": GREEDY}, sink)
    for _ in range(5):
        batcher.step()
    sinks[1].closed = True  # what an ABORT does to a sink
    batcher.step()
    assert len(batcher._running) == 2
    while batcher.has_work():
        batcher.step()
    assert [sinks[0].text(), sinks[2].text()] == [solo[0], solo[2]]


def test_stop_token_id_ends_with_stop_and_counts_the_token(engine):
    loaded = engine.scheduler()._loaded
    ids = loaded.tokenizer(PROMPTS[1])["input_ids"]
    tokens = loaded.model.generate(torch.tensor([ids]), max_new_tokens=20, do_sample=False)[0, len(ids):].tolist()
    k = 6
    stop_id = tokens[k]
    first = tokens.index(stop_id)
    result = engine.generate(PROMPTS[1], generate_config={**GREEDY, "stop_token_ids": [stop_id]})
    assert result["finish_reason"] == "stop"
    assert result["usage"]["completion_tokens"] == first + 1
    assert result["text"] == loaded.tokenizer.decode(tokens[:first], skip_special_tokens=True)


def test_end_token_ends_with_stop_and_counts(engine):
    loaded = engine.scheduler()._loaded
    eos = loaded.tokenizer.eos_token_id
    ids = loaded.tokenizer("Hello")["input_ids"]
    out = loaded.model.generate(torch.tensor([ids]), max_new_tokens=200, do_sample=False, eos_token_id=eos)
    tokens = out[0, len(ids):].tolist()
    assert tokens[-1] == eos  # the tiny model does end its reply to "Hello" within 200 tokens
    result = engine.generate("Hello", generate_config={"max_tokens": 200, "temperature": 0})
    assert result["finish_reason"] == "stop"
    assert result["usage"]["completion_tokens"] == len(tokens)
    assert result["text"] == loaded.tokenizer.decode(tokens[:-1], skip_special_tokens=True)


def test_max_tokens_defaults_to_256_and_is_capped_by_the_context(batcher):
    for config, expected in [({}, lambda n: 256), ({"max_tokens": 100000}, lambda n: 512 - n)]:
        sink = ListSink(1, stream=False)
        batcher.submit("generate", ["Hello there"], {"generate_config": config}, sink)
        request = batcher._waiting[-1].request
        assert request.max_tokens == expected(len(request.prompt_ids))
        sink.closed = True
        batcher.step()


def test_seeded_sampling_repeats_alone_and_in_a_batch(engine, batcher):
    config = {"max_tokens": 30, "temperature": 0.9, "top_p": 0.95, "top_k": 50, "seed": 7}
    alone = engine.generate(PROMPTS[0], generate_config=config)["text"]
    assert engine.generate(PROMPTS[0], generate_config=config)["text"] == alone
    sinks = [ListSink(i, stream=False) for i in range(3)]
    for sink, prompt in zip(sinks, [PROMPTS[2], PROMPTS[0], PROMPTS[3]]):
        batcher.submit("generate", [prompt], {"generate_config": config}, sink)
    while batcher.has_work():
        batcher.step()
    assert sinks[1].text() == alone


def replay(engine, reply: str, stream: bool, **request_options) -> ListSink:
    """Feeds a Sequence the tokens of `reply`, then the end token, as if the model
    had generated them."""
    tokenizer = engine.scheduler()._loaded.tokenizer
    ids = tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    request = Request(prompt_ids=[5, 6], config=GenerateConfig(), max_tokens=100, stop=[],
                      stop_token_ids=frozenset({tokenizer.eos_token_id}), **request_options)
    sink = ListSink(1, stream=stream)
    sequence = Sequence(request, sink, tokenizer)
    for token in ids:
        sequence.accept(token)
    assert sink.closed and sink.value["usage"]["completion_tokens"] == len(ids)
    return sink


def test_tool_call_in_a_stream_comes_as_tool_calls_not_text(engine):
    reply = 'On it. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    sink = replay(engine, reply, stream=True, tool_format="hermes")
    *deltas, last = sink.chunks
    assert "".join(d["text"] for d in deltas) == "On it. "
    assert last["finish_reason"] == "tool_calls" and last["text"] == ""
    assert last["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert last["usage"]["prompt_tokens"] == 2


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_then_answer_then_tool_call(engine, stream):
    reply = ('<think>\nThe user wants weather.\n</think>\n\nChecking.'
             '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>')
    sink = replay(engine, reply, stream, tool_format="hermes", reasoning_tags=("<think>", "</think>"))
    if stream:
        *deltas, last = sink.chunks
        text = "".join(d["text"] for d in deltas)
        thought = "".join(d.get("reasoning_content", "") for d in deltas)
    else:
        last = sink.value
        text, thought = last["text"], last["reasoning_content"]
    assert (thought, text) == ("The user wants weather.\n", "Checking.")
    assert last["finish_reason"] == "tool_calls" and last["tool_calls"][0]["function"]["name"] == "get_weather"


def test_sampler_filters():
    logits = torch.tensor([1.0, 3.0, 2.0, 0.5])
    assert torch.isinf(keep_top_k(logits, 2)).tolist() == [True, False, False, True]
    # probabilities ~ [.08, .60, .22, .05]: the top one alone falls short of 0.7, two reach it
    assert torch.isinf(keep_top_p(logits, 0.7)).tolist() == [True, False, False, True]
    assert torch.isinf(keep_top_p(logits, 0.01)).tolist() == [True, False, True, True]
    greedy = Sampler(GenerateConfig(temperature=0.0, repetition_penalty=2.0))
    assert greedy.choose(logits, history=[]) == 1
    assert greedy.choose(logits, history=[1]) == 2  # 3/2 = 1.5 < 2
    top1 = Sampler(GenerateConfig(temperature=1.0, top_k=1, seed=1))
    assert top1.greedy and top1.choose(logits, history=[]) == 1


# ---- OpenAI's logprobs, penalties and logit_bias (issue 19) ----

def _model_logprobs(engine, prompt: str, tokens: list[int]) -> list[torch.Tensor]:
    """log_softmax of the model's logits before each generated token, by a plain forward pass."""
    loaded = engine.scheduler()._loaded
    ids = loaded.tokenizer(prompt)["input_ids"]
    with torch.no_grad():
        logits = loaded.model(torch.tensor([ids + tokens])).logits[0].float()
    return [torch.log_softmax(logits[len(ids) - 1 + i], dim=-1) for i in range(len(tokens))]


@pytest.mark.parametrize("stream", [False, True])
def test_logprobs_are_the_models_own_with_top_alternatives(engine, stream):
    loaded = engine.scheduler()._loaded
    config = {**GREEDY, "max_tokens": 6, "logprobs": True, "top_logprobs": 3}
    sink = ListSink(1, stream=stream)
    batcher = engine.scheduler()
    batcher.submit("generate", [PROMPTS[1]], {"generate_config": config}, sink)
    while batcher.has_work():
        batcher.step()
    entries = [e for c in sink.chunks for e in c.get("logprobs", [])] if stream else sink.value["logprobs"]
    assert len(entries) == sink.value["usage"]["completion_tokens"] == 6
    ids = loaded.tokenizer(PROMPTS[1])["input_ids"]
    generated = loaded.model.generate(torch.tensor([ids]), max_new_tokens=6, do_sample=False)[0, len(ids):].tolist()
    expected = _model_logprobs(engine, PROMPTS[1], generated)
    from hangar_runtime.engines.transformers_llm.token_bytes import token_text_and_bytes

    for entry, token, lp in zip(entries, generated, expected):
        assert (entry["token"], entry["bytes"]) == token_text_and_bytes(loaded.tokenizer, token)
        assert entry["logprob"] == pytest.approx(float(lp[token]), abs=1e-3)
        assert len(entry["top_logprobs"]) == 3
        # Greedy: the chosen token is the most likely one.
        assert entry["top_logprobs"][0]["logprob"] == pytest.approx(entry["logprob"], abs=1e-5)


def test_logprob_bytes_put_the_text_back_together_where_tokens_split_characters(engine):
    """A token holding part of a character decodes alone to U+FFFD: its entry carries its
    own bytes (OpenAI's `bytes`) and OpenAI's `bytes:\\xNN` spelling, so the bytes of all
    entries are the text's, and distinct tokens stay distinct among the alternatives."""
    from hangar_runtime.engines.transformers_llm.token_bytes import token_text_and_bytes

    tokenizer = engine.scheduler()._loaded.tokenizer
    text = "é😀日本 naïve"
    ids = tokenizer(text)["input_ids"]
    pieces = [token_text_and_bytes(tokenizer, i) for i in ids]
    assert b"".join(bytes(b) for _, b in pieces).decode("utf-8") == text
    partial = [t for t, _ in pieces if t.startswith("bytes:")]
    assert partial and all(re.fullmatch(r"bytes:(\\x[0-9a-f]{2})+", t) for t in partial)
    assert ("é" not in text) or len({t for t, _ in pieces[:2]}) == 2
    # Through the engine (this random model writes many byte tokens): no entry is a bare
    # U+FFFD, and the alternatives, four distinct tokens, have four distinct spellings.
    config = {**GREEDY, "max_tokens": 12, "logprobs": True, "top_logprobs": 4}
    result = engine.generate("日本語の文章", generate_config=config)
    for entry in result["logprobs"]:
        for item in [entry, *entry["top_logprobs"]]:
            assert item["token"] != "\ufffd" and bytes(item["bytes"]) != "\ufffd".encode()
        assert len({alt["token"] for alt in entry["top_logprobs"]}) == 4


def test_logit_bias_forces_a_token_and_penalties_change_greedy_text(engine):
    loaded = engine.scheduler()._loaded
    forced = loaded.tokenizer(" the")["input_ids"][-1]
    biased = engine.generate(PROMPTS[0], generate_config={**GREEDY, "max_tokens": 5, "logit_bias": {str(forced): 100}})
    assert biased["text"] == loaded.tokenizer.decode([forced] * 5)
    plain = engine.generate(PROMPTS[2], generate_config={**GREEDY, "max_tokens": 30})
    penalised = engine.generate(PROMPTS[2], generate_config={**GREEDY, "max_tokens": 30, "frequency_penalty": 2.0, "presence_penalty": 2.0})
    assert penalised["text"] != plain["text"]
    for bad in ({"frequency_penalty": 3}, {"logit_bias": {"-1": 1}}, {"logit_bias": {"x": 1}}, {"logit_bias": {"1": 500}}, {"top_logprobs": 21, "logprobs": True}):
        with pytest.raises((ValueError, TypeError)):
            engine.generate(PROMPTS[0], generate_config={**GREEDY, **bad})
    with pytest.raises(ValueError, match="outside this model's vocabulary"):
        engine.generate(PROMPTS[0], generate_config={**GREEDY, "logit_bias": {"999999": 1}})


def test_ignore_eos_runs_past_the_models_end_token_but_not_the_requests_own(engine):
    loaded = engine.scheduler()._loaded
    eos = min(loaded.eos_token_ids)
    # The bias makes the end token the model's only choice.
    forced = {**GREEDY, "max_tokens": 6, "logit_bias": {str(eos): 100}}
    ended = engine.generate(PROMPTS[0], generate_config=forced)
    assert (ended["finish_reason"], ended["usage"]["completion_tokens"]) == ("stop", 1)
    ignored = engine.generate(PROMPTS[0], generate_config={**forced, "ignore_eos": True})
    assert (ignored["finish_reason"], ignored["usage"]["completion_tokens"]) == ("length", 6)
    own = engine.generate(PROMPTS[0], generate_config={**forced, "ignore_eos": True, "stop_token_ids": [eos]})
    assert (own["finish_reason"], own["usage"]["completion_tokens"]) == ("stop", 1)
    with pytest.raises(TypeError, match="ignore_eos"):
        engine.generate(PROMPTS[0], generate_config={**GREEDY, "ignore_eos": "yes"})


def test_min_p_keeps_only_tokens_near_the_likeliest(engine):
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    kept = keep_min_p(logits, 0.5)  # threshold 0.25: the first two
    assert torch.isfinite(kept).tolist() == [True, True, False, False]
    assert torch.isfinite(keep_min_p(logits, 1.0)).tolist() == [True, False, False, False]
    # Sampling with min_p 1 can only draw the likeliest token: greedy's text.
    greedy = engine.generate(PROMPTS[2], generate_config={**GREEDY, "max_tokens": 12})
    sampled = engine.generate(PROMPTS[2], generate_config={"max_tokens": 12, "temperature": 1.5, "min_p": 1.0, "seed": 3})
    assert sampled["text"] == greedy["text"]
    for bad in ({"min_p": 1.5}, {"min_p": -0.1}, {"min_tokens": -1}):
        with pytest.raises(ValueError):
            engine.generate(PROMPTS[0], generate_config={**GREEDY, **bad})
    with pytest.raises(ValueError, match="min_tokens needs the vLLM engine"):
        engine.generate(PROMPTS[0], generate_config={**GREEDY, "min_tokens": 3})


def generated(batcher, sink) -> int:
    """Tokens chosen so far for the call of this sink (text may be held back, so not its chunks)."""
    return next(s.generated for s in batcher._running if s.sink is sink)


def test_a_step_that_admits_ends_after_the_prefill_and_the_next_one_decodes(batcher):
    """The newcomers' first tokens are chosen in the admitting step, which then ends (the
    work loop sends a step's answers when it ends) instead of also decoding the batch."""
    running, newcomer = ListSink(1, stream=True), ListSink(2, stream=True)
    batcher.submit("generate", [PROMPTS[1]], {"generate_config": GREEDY}, running)
    batcher.step()  # admits: the first token
    assert generated(batcher, running) == 1
    batcher.step()  # decodes: the second
    assert generated(batcher, running) == 2
    batcher.submit("generate", [PROMPTS[2]], {"generate_config": GREEDY}, newcomer)
    batcher.step()
    assert generated(batcher, newcomer) == 1, "the admitting step gave the newcomer its first token"
    assert generated(batcher, running) == 2, "and decoded nobody"
    batcher.step()
    assert (generated(batcher, newcomer), generated(batcher, running)) == (2, 3)
    while batcher.has_work():
        batcher.step()


def test_arrivals_at_every_step_do_not_starve_the_running(batcher, solo):
    """A call arriving before every step would, if admitting always came first, keep the
    running sequences from ever decoding; every other step decodes instead."""
    first = ListSink(0, stream=True)
    batcher.submit("generate", [PROMPTS[0]], {"generate_config": GREEDY}, first)
    batcher.step()
    others = []
    for i in range(1, 7):
        before = generated(batcher, first)
        others.append(ListSink(i, stream=False))
        batcher.submit("generate", [PROMPTS[i]], {"generate_config": GREEDY}, others[-1])
        batcher.step()
        batcher.step()
        assert generated(batcher, first) == before + 1, f"round {i}: the running sequence got no token"
    while batcher.has_work():
        batcher.step()
    assert first.text() == solo[0]
    assert [s.text() for s in others] == solo[1:7]


def test_a_long_call_is_prepared_apart_while_the_batch_steps(batcher, engine, solo, monkeypatch):
    """A call with more text than PREPARE_APART_CHARS is rendered and tokenized on a
    thread of its own; the running call keeps getting tokens, and a refusal of the long
    one arrives through its sink, not as an exception from submit."""
    import threading

    from hangar_runtime.engines.transformers_llm import batcher as batcher_module

    threads = []
    real = batcher._make_sequence

    def observed(method, args, kwargs, sink):
        threads.append(threading.current_thread().name)
        return real(method, args, kwargs, sink)

    monkeypatch.setattr(batcher, "_make_sequence", observed)
    short, long_refused = ListSink(1, stream=True), ListSink(2, stream=False)
    batcher.submit("generate", [PROMPTS[1]], {"generate_config": GREEDY}, short)
    batcher.submit("generate", ["lorem ipsum " * 10_000], {"generate_config": GREEDY}, long_refused)
    assert not long_refused.closed and batcher.has_work()
    steps = 0
    while batcher.has_work():
        batcher.step()
        steps += 1
        assert steps < 2000
    assert threads[0] == threading.current_thread().name
    assert threads[1].startswith("hangar-prepare")
    assert short.text() == solo[1]
    error = long_refused.value[2]
    assert isinstance(error, ValueError) and "leaves no room in the model's context" in str(error)
    assert batcher_module.PREPARE_APART_CHARS < len("lorem ipsum " * 10_000)



def test_a_long_chat_renders_its_template_on_the_work_loop_and_tokenizes_apart(batcher, monkeypatch):
    """The render's limits hold only on the work loop (template_limits.py), so a long chat
    renders there; its tokenizing still runs apart, and a refusal arrives through its sink."""
    import threading

    from hangar_runtime.engines.transformers_llm import request_builder

    rendered_on, tokenized_on = [], []
    real_render, real_request = request_builder.render_chat, request_builder.RequestBuilder._request

    def render(*args, **kwargs):
        rendered_on.append(threading.current_thread().name)
        return real_render(*args, **kwargs)

    def request(self, *args, **kwargs):
        tokenized_on.append(threading.current_thread().name)
        return real_request(self, *args, **kwargs)

    monkeypatch.setattr(request_builder, "render_chat", render)
    monkeypatch.setattr(request_builder.RequestBuilder, "_request", request)
    sink = ListSink(3, stream=False)
    batcher.submit("chat", [[{"role": "user", "content": "lorem ipsum " * 10_000}]], {"generate_config": GREEDY}, sink)
    steps = 0
    while batcher.has_work():
        batcher.step()
        steps += 1
        assert steps < 2000
    assert rendered_on == [threading.current_thread().name]
    assert tokenized_on and tokenized_on[0].startswith("hangar-prepare")
    assert isinstance(sink.value[2], ValueError) and "leaves no room in the model's context" in str(sink.value[2])
