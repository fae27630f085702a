"""Vision chat on the Transformers engine, with the tiny LLaVA of
test/fixtures/tiny_models.py: images in `image_url` parts (data: URLs) reach the
model through its processor, in the batcher's prefill, and each answer equals
transformers' own generate() over the processor's inputs."""

import base64
import io

import pytest

from hangar_runtime.engines.transformers_llm.engine import TransformersLLMEngine
from hangar_runtime.engines.transformers_llm.vision_inputs import MAX_IMAGES

from conftest import fixture_module
from test_llm_batching import ListSink

GREEDY = {"max_tokens": 12, "temperature": 0, "ignore_eos": True}


def png(seed: int, size=(40, 48)) -> str:
    import numpy as np
    from PIL import Image

    pixels = (np.random.RandomState(seed).rand(size[1], size[0], 3) * 255).astype("uint8")
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def image_message(text: str, *urls: str) -> dict:
    return {"role": "user", "content": [*({"type": "image_url", "image_url": {"url": u}} for u in urls),
                                        {"type": "text", "text": text}]}


@pytest.fixture(scope="module")
def engine(tiny_vision):
    engine = TransformersLLMEngine()
    engine.load({"model_uri": tiny_vision["path"], "engine_kwargs": {}, "model_ability": ["chat", "vision"]},
                lambda *a: None)
    return engine


def reference(tiny_vision, messages) -> str:
    """transformers' own answer: the processor's chat template and inputs, generate()."""
    return fixture_module("vision_reference").greedy_answers(tiny_vision["path"], [messages], GREEDY["max_tokens"])[0]


def test_the_pixels_reach_the_model_and_each_answer_is_transformers_own(engine, tiny_vision):
    answers = []
    for seed in (1, 2):
        messages = [image_message("What is in this picture?", png(seed))]
        got = engine.chat(messages, generate_config=GREEDY)
        assert got["text"] == reference(tiny_vision, messages)
        answers.append(got)
    assert answers[0]["text"] != answers[1]["text"]
    text_only = engine.chat([{"role": "user", "content": "What is in this picture?"}], generate_config=GREEDY)
    # The image's tokens count in the prompt's usage (the template writes "<image>\n": one more).
    assert answers[0]["usage"]["prompt_tokens"] == text_only["usage"]["prompt_tokens"] + tiny_vision["image_tokens"] + 1
    assert "vision" in engine.abilities


def test_several_images_and_images_in_earlier_turns(engine, tiny_vision):
    messages = [image_message("Compare these.", png(3), png(4)),
                {"role": "assistant", "content": "They differ."},
                image_message("And this one?", png(5))]
    got = engine.chat(messages, generate_config=GREEDY)
    assert got["text"] == reference(tiny_vision, messages)
    assert got["usage"]["prompt_tokens"] > 3 * tiny_vision["image_tokens"]


def test_image_and_text_calls_share_a_batch_and_answer_as_alone(engine):
    calls = [[image_message("Describe it.", png(seed))] if seed else [{"role": "user", "content": "Hello there"}]
             for seed in (6, 0, 7, 6)]
    alone = [engine.chat(m, generate_config=GREEDY)["text"] for m in calls]
    batcher = engine.scheduler()
    sinks = []
    for i, messages in enumerate(calls):
        sink = ListSink(i, stream=i % 2 == 1)
        batcher.submit("chat", [messages], {"generate_config": GREEDY}, sink)
        sinks.append(sink)
        batcher.step()  # arrivals spread over steps: later ones join a running batch
    steps = 0
    while batcher.has_work():
        batcher.step()
        steps += 1
        assert steps < 200
    assert [s.text() for s in sinks] == alone


def _pcx() -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buffer, format="PCX")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


@pytest.mark.parametrize("url, message", [
    ("https://example.com/cat.png", "the runtime takes data: URLs"),
    # A format no client sends is not decoded at all (crafted AVIF and QOI files raised their decoders' own errors: 500s).
    (_pcx(), r"not an image this service can read .*send one of: png, jpeg, gif, bmp, tiff, webp"),
    ("data:image/png,rawbytes", "must be base64"),
    ("data:image/png;base64,@@@@", "not valid base64"),
    ("data:image/png;base64," + base64.b64encode(b"not an image at all").decode(), "not an image this service can read"),
])
def test_bad_images_are_refused_naming_the_part(engine, url, message):
    with pytest.raises(ValueError, match=rf"messages\[0\]\.content\[0\].*{message}"):
        engine.chat([image_message("What?", url)], generate_config=GREEDY)


def test_a_decompression_bomb_and_too_many_images_are_refused(engine):
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("1", (8000, 8000)).save(buffer, format="PNG")  # 64 M pixels in a few kB
    bomb = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    with pytest.raises(ValueError, match=r"8000x8000 pixels"):
        engine.chat([image_message("What?", bomb)], generate_config=GREEDY)
    with pytest.raises(ValueError, match=rf"at most {MAX_IMAGES} per request"):
        engine.chat([image_message("What?", *[png(1)] * (MAX_IMAGES + 1))], generate_config=GREEDY)
    # Each under the 40 M of one image; three together past the request's 80 M: the third is
    # refused from its header (sixteen such took 4.2 GB before), naming its part.
    buffer = io.BytesIO()
    Image.new("1", (6000, 6000)).save(buffer, format="PNG")
    big = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    with pytest.raises(ValueError, match=r"messages\[0\]\.content\[2\]: the request's images come to over 80000000 pixels"):
        engine.chat([image_message("What?", big, big, big)], generate_config=GREEDY)


@pytest.mark.parametrize("size", [(1, 6_000_000), (6_000_000, 1), (1, 201)])
def test_a_strip_of_extreme_aspect_ratio_is_refused_before_the_processor_scales_it(engine, size):
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("1", size).save(buffer, format="PNG")  # a few kB: under every pixel and byte limit
    strip = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    with pytest.raises(ValueError, match=rf"{size[0]}x{size[1]} pixels; its long side may be at most 200 times"):
        engine.chat([image_message("What?", strip)], generate_config=GREEDY)


def test_an_unreadable_image_is_named_without_the_buffers_address(engine):
    url = "data:image/png;base64," + base64.b64encode(b"not an image at all").decode()
    with pytest.raises(ValueError) as caught:
        engine.chat([image_message("What?", url)], generate_config=GREEDY)
    assert "0x" not in str(caught.value) and "BytesIO" not in str(caught.value)


def test_a_text_model_refuses_images_clearly(tiny_llm):
    engine = TransformersLLMEngine()
    engine.load({"model_uri": tiny_llm["path"], "engine_kwargs": {}, "model_ability": ["chat"]}, lambda *a: None)
    with pytest.raises(ValueError, match="takes text only, not image_url parts"):
        engine.chat([image_message("What?", png(1))], generate_config=GREEDY)
