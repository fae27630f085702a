"""The sentence_transformers engine in this process, on the tiny BERTs of
test/fixtures/tiny_models.py: result shapes, token counts, input checks, and
results that do not depend on their batch mates."""

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from hangar_runtime.engines.sentence_transformers.engine import SentenceTransformersEngine  # noqa: E402
from hangar_runtime.errors import InvalidModel  # noqa: E402

TEXTS = ["the quick brown fox", "a lazy dog sleeps in the sun", "hello", "stock market news today",
         "fox " * 100, "recipes for bread need flour, water, salt and yeast"]
DOCUMENTS = ["a fox in the forest", "stock market news", "the quick brown fox jumps", "recipes for bread"]


def load(model_type: str, path: str, **engine_kwargs) -> SentenceTransformersEngine:
    engine = SentenceTransformersEngine()
    engine.load({"model_type": model_type, "model_uri": path, "engine_kwargs": engine_kwargs}, lambda *a: None)
    return engine


@pytest.fixture(scope="module")
def embedder(tiny_embedder):
    return load("embedding", tiny_embedder["path"])


@pytest.fixture(scope="module")
def reranker(tiny_cross_encoder):
    return load("rerank", tiny_cross_encoder["path"])


class Sink:
    stream = False
    alone = False

    def __init__(self, call_id: int):
        self.call_id, self.closed, self.value, self.error = call_id, False, None, None

    def chunk(self, value):
        raise AssertionError("no chunks here")

    def finish(self, value=None):
        self.value, self.closed = value, True

    def fail(self, exc, kind=None):
        self.error, self.closed = exc, True


def batched(engine, method: str, calls: list[tuple[list, dict]]) -> list[Sink]:
    """Submits every call, then one step: one forward pass for all of them."""
    batcher = engine.scheduler()
    sinks = [Sink(i) for i in range(len(calls))]
    for sink, (args, kwargs) in zip(sinks, calls):
        batcher.submit(method, args, kwargs, sink)
    before = len(batcher.passes)
    batcher.step()
    assert not batcher.has_work() and list(batcher.passes)[before:] == [len(calls)]
    return sinks


def test_describe_and_abilities(embedder, reranker, tiny_embedder):
    assert embedder.abilities == ("embed",) and list(embedder.methods()) == ["embed", "convert_ids_to_tokens"]
    assert embedder.describe() == {"dimensions": tiny_embedder["dimensions"], "max_tokens": tiny_embedder["max_tokens"]}
    assert reranker.abilities == ("rerank",) and list(reranker.methods()) == ["rerank", "convert_ids_to_tokens"]
    assert reranker.describe() == {"max_tokens": tiny_embedder["max_tokens"]}


def test_embeddings_are_unit_vectors_and_tokens_are_counted(embedder, tiny_embedder):
    value = embedder.embed(TEXTS[:3])
    vectors = np.asarray(value["embeddings"])
    assert vectors.shape == (3, tiny_embedder["dimensions"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    # Each input is read with [CLS] and [SEP]; the vocabulary knows these words.
    tokenizer = embedder.scheduler()._task._tokenizer
    assert value["prompt_tokens"] == sum(len(tokenizer(t)["input_ids"]) for t in TEXTS[:3])
    assert tokenizer.unk_token_id not in tokenizer("the quick brown fox")["input_ids"]
    # Over max_tokens: cut, and counted as cut.
    assert embedder.embed([TEXTS[4]])["prompt_tokens"] == tiny_embedder["max_tokens"]


def test_vectors_are_the_same_alone_and_in_a_batch(embedder):
    alone = [np.asarray(embedder.embed([t])["embeddings"][0]) for t in TEXTS]
    # Uneven calls sharing one pass: the short inputs are padded next to the long one.
    sinks = batched(embedder, "embed", [([TEXTS[:2]], {}), ([TEXTS[2:5]], {}), ([TEXTS[5:]], {})])
    together = np.concatenate([np.asarray(s.value["embeddings"]) for s in sinks])
    assert np.abs(together - np.stack(alone)).max() < 1e-5
    assert sum(s.value["prompt_tokens"] for s in sinks) == embedder.embed(TEXTS)["prompt_tokens"]


def test_dimensions_cut_and_renormalise(embedder):
    full = np.asarray(embedder.embed(["hello world"])["embeddings"][0])
    cut = np.asarray(embedder.embed(["hello world"], dimensions=8)["embeddings"][0])
    assert cut.shape == (8,) and np.linalg.norm(cut) == pytest.approx(1, abs=1e-5)
    assert np.allclose(cut, full[:8] / np.linalg.norm(full[:8]), atol=1e-6)
    # In one batch, each call gets its own dimensions.
    a, b = batched(embedder, "embed", [([["hello world"]], {"dimensions": 8}), ([["hello world"]], {})])
    assert len(a.value["embeddings"][0]) == 8 and len(b.value["embeddings"][0]) == len(full)


def test_token_id_inputs_are_decoded_first(embedder):
    tokenizer = embedder.scheduler()._task._tokenizer
    ids = tokenizer("the quick brown fox", add_special_tokens=False)["input_ids"]
    from_ids = embedder.embed([ids, tokenizer("hello")["input_ids"]])
    from_text = embedder.embed(["the quick brown fox", "hello"])
    assert np.allclose(from_ids["embeddings"], from_text["embeddings"], atol=1e-6)
    assert from_ids["prompt_tokens"] == from_text["prompt_tokens"]


@pytest.mark.parametrize("args, kwargs, error, fragment", [
    (["hello"], {}, TypeError, "must be a list"),
    ([[]], {}, ValueError, "must not be empty"),
    ([["ok", {"x": 1}]], {}, TypeError, "input 1"),
    ([["ok", [1, 10**6]]], {}, ValueError, "input 1 has token id 1000000"),
    ([["ok", [1, -1]]], {}, ValueError, "outside the model's vocabulary"),
    ([["ok"]], {"dimensions": 33}, ValueError, "model's 32"),
    ([["ok"]], {"dimensions": 0}, ValueError, "between 1"),
    ([["ok"]], {"truncate": "no"}, TypeError, "truncate"),
    ([["ok"]], {"top_k": 3}, TypeError, "embed: got an unexpected keyword argument 'top_k'"),
    ([["ok", "fox " * 100]], {"truncate": False}, ValueError, "input 1 has 102 tokens, more than the model's 64"),
])
def test_bad_embed_calls(embedder, args, kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        embedder.embed(*args, **kwargs)


def test_rerank_scores_in_input_order(reranker):
    value = reranker.rerank("quick fox", DOCUMENTS)
    assert len(value["scores"]) == len(DOCUMENTS) and all(isinstance(s, float) for s in value["scores"])
    singles = [reranker.rerank("quick fox", [d])["scores"][0] for d in DOCUMENTS]
    assert value["scores"] == pytest.approx(singles, abs=1e-5)
    assert max(range(len(DOCUMENTS)), key=lambda i: value["scores"][i]) == 2  # the tiny model agrees
    tokenizer = reranker.scheduler()._task._loaded.tokenizer
    assert value["input_tokens"] == sum(len(tokenizer("quick fox", d)["input_ids"]) for d in DOCUMENTS)


def test_rerank_batched_with_an_over_long_call(reranker):
    batcher = reranker.scheduler()
    with pytest.raises(ValueError, match="document 1 with the query has"):
        batcher.submit("rerank", ["quick fox", ["fox", "word " * 70]], {"truncate": False}, Sink(9))
    a, b = batched(reranker, "rerank", [(["quick fox", DOCUMENTS[:2]], {}), (["bread", DOCUMENTS], {})])
    assert a.value["scores"] == pytest.approx(reranker.rerank("quick fox", DOCUMENTS[:2])["scores"], abs=1e-5)
    assert b.value["scores"] == pytest.approx(reranker.rerank("bread", DOCUMENTS)["scores"], abs=1e-5)


def test_batching_off_has_no_scheduler(tiny_embedder):
    engine = load("embedding", tiny_embedder["path"], batching=False)
    assert engine.scheduler() is None and len(engine.embed(["x"])["embeddings"]) == 1


@pytest.mark.parametrize("model_type, engine_kwargs, fragment", [
    ("LLM", {}, "not model_type 'LLM'"),
    ("embedding", {"batch_window_ms": -1}, "batch_window_ms"),
    ("embedding", {"max_batch_size": 0}, "max_batch_size"),
    ("embedding", {"batching": "yes"}, "batching"),
])
def test_bad_load_specs(tiny_embedder, model_type, engine_kwargs, fragment):
    with pytest.raises(InvalidModel, match=fragment):
        load(model_type, tiny_embedder["path"], **engine_kwargs)


def test_a_folder_that_is_no_model_is_invalid(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(InvalidModel, match="Cannot load"):
        load("embedding", str(tmp_path))


def test_the_registration_caps_max_tokens(tiny_embedder):
    engine = SentenceTransformersEngine()
    engine.load({"model_type": "embedding", "model_uri": tiny_embedder["path"], "max_tokens": 16}, lambda *a: None)
    assert engine.describe()["max_tokens"] == 16
    assert engine.embed(["word " * 40])["prompt_tokens"] == 16


def test_a_cross_encoder_with_several_labels_is_no_reranker(tmp_path, tiny_cross_encoder):
    from transformers import AutoConfig, AutoTokenizer, BertForSequenceClassification

    config = AutoConfig.from_pretrained(tiny_cross_encoder["path"])
    config.num_labels = 3
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(tiny_cross_encoder["path"]).save_pretrained(tmp_path)
    with pytest.raises(InvalidModel, match="3 output labels"):
        load("rerank", str(tmp_path))


def test_a_huge_input_is_read_as_far_as_the_model_reads_it_with_the_same_vector_and_count(embedder, reranker, tiny_embedder):
    """Megabytes of input were tokenized whole, twice, for the few tokens the model reads,
    holding the model for every other caller; now only a bounded head is tokenized."""
    from hangar_runtime.engines.sentence_transformers import token_counts

    limit = tiny_embedder["max_tokens"]
    huge = "the quick brown fox " * 50_000  # 1 MB
    tokenizer = embedder.scheduler()._task._tokenizer
    texts, cut = token_counts.bounded(tokenizer, [huge, "short"], limit, token_counts.longest_token_chars(tokenizer))
    assert cut == {0} and len(texts[0]) < 20_000 and texts[1] == "short"
    whole, head = embedder.embed([huge]), embedder.embed([huge[:20_000]])
    assert whole["prompt_tokens"] == head["prompt_tokens"] == limit
    assert whole["embeddings"][0] == pytest.approx(head["embeddings"][0], abs=1e-6)
    with pytest.raises(ValueError, match=f"input 0 has at least \\d+ tokens, more than the model's {limit}") as refused:
        embedder.embed([huge], truncate=False)
    assert refused.value.param == "input"
    # Whitespace, which tokens leave out, may not hide tokens past the cut: such a text is read whole.
    spaced = "alpha" + " " * 400_000 + "omega"
    assert token_counts.bounded(tokenizer, [spaced], limit, token_counts.longest_token_chars(tokenizer))[1] == set()
    assert embedder.embed([spaced])["embeddings"][0] == pytest.approx(embedder.embed(["alpha omega"])["embeddings"][0], abs=1e-6)
    # Padding before many words: the head grows past the padding, and is cut there.
    padded = "alpha" + " " * 100_000 + "word " * 200_000
    texts, cut = token_counts.bounded(tokenizer, [padded], limit, token_counts.longest_token_chars(tokenizer))
    assert cut == {0} and len(texts[0]) < len(padded) // 2
    assert embedder.embed([padded])["embeddings"][0] == pytest.approx(embedder.embed(["alpha " + "word " * 200])["embeddings"][0], abs=1e-6)
    # A reranker's query is counted once, not once per document; the counts are the pairs' own.
    rerank_tokenizer = reranker.scheduler()._task._loaded.tokenizer
    documents = ["fox", "a much longer document about the lazy dog", ""]
    # As the cross-encoder tokenizes its batch of pairs (an empty document is still a pair).
    assert token_counts.count_pair_tokens(rerank_tokenizer, "quick fox", documents) == [
        len(ids) for ids in rerank_tokenizer(["quick fox"] * len(documents), documents)["input_ids"]]
    scored, cut_scored = reranker.rerank(huge, ["fox", huge]), reranker.rerank(huge[:20_000], ["fox", huge[:20_000]])
    assert scored["scores"] == pytest.approx(cut_scored["scores"], abs=1e-5)
    assert scored["input_tokens"] == cut_scored["input_tokens"] == 2 * limit
    with pytest.raises(ValueError, match="with the query has at least") as refused:
        reranker.rerank("fox", ["word " * 100_000], truncate=False)
    assert refused.value.param == "documents"
