"""Qwen2-VL's 3-D rotary positions (M-RoPE) in the continuous batcher: sequences with
and without images, arriving at different steps, each answer as transformers' own
generate() does alone.

Qwen2-VL's processor cannot be built here (its video part needs torchvision, whose
wheels do not load with this CPU torch), so the test stands in for the processor
with `QwenInputs` below: the library's PIL image processor plus the placeholder
expansion Qwen2VLProcessor does. What is under test is the batcher's positions, fed
the same inputs generate() gets; the model is a tiny random Qwen2-VL of the real class."""

import pytest
import torch

from hangar_runtime.engines.transformers_llm.batcher import Batcher
from hangar_runtime.engines.transformers_llm.loaded_model import LoadedModel
from hangar_runtime.engines.transformers_llm.request_builder import ModelFacts, RequestBuilder
from hangar_runtime.engines.transformers_llm.sequence import Sequence

from conftest import tiny_models_module
from test_llm_batching import ListSink
from test_llm_vision import png

MAX_TOKENS = 10
TEMPLATE = ("{% for message in messages %}<|im_start|>{{ message.role }}\n{% if message.content is string %}{{ message.content }}"
            "{% else %}{% for part in message.content %}{% if part.type == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
            "{% elif part.type == 'text' %}{{ part.text }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class QwenInputs:
    """What Qwen2VLProcessor returns, without its video half: pixel patches, each
    image's grid, its <|image_pad|> expanded to grid/merge² tokens, and the token types."""

    def __init__(self, tokenizer, image_processor):
        self.tokenizer, self.image_processor, self.chat_template = tokenizer, image_processor, TEMPLATE
        self.pad_id = tokenizer.convert_tokens_to_ids("<|image_pad|>")

    def apply_chat_template(self, messages, **options):
        return self.tokenizer.apply_chat_template(messages, **{**options, "chat_template": options.get("chat_template") or TEMPLATE})

    def __call__(self, text, images=None, return_tensors="pt", add_special_tokens=False):
        vision = self.image_processor(images=images, return_tensors="pt") if images else {}
        grids = iter(vision["image_grid_thw"].tolist()) if images else iter(())
        merge = self.image_processor.merge_size ** 2
        prompt = text[0]
        while "<|image_pad|>" in prompt:
            t, h, w = next(grids)
            prompt = prompt.replace("<|image_pad|>", "<|placeholder|>" * (t * h * w // merge), 1)
        ids = self.tokenizer(prompt.replace("<|placeholder|>", "<|image_pad|>"), add_special_tokens=add_special_tokens,
                             return_tensors="pt")["input_ids"]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                "mm_token_type_ids": (ids == self.pad_id).long(), **dict(vision)}


@pytest.fixture(scope="module")
def qwen():
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessorPil
    tiny_models = tiny_models_module()
    tokenizer = tiny_models.build_tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]})
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>")}
    config = Qwen2VLConfig(
        text_config=dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, initializer_range=0.2,
                         rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0},
                         bos_token_id=None, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id),
        vision_config=dict(depth=2, embed_dim=32, hidden_size=64, num_heads=4, patch_size=8, spatial_merge_size=2,
                           temporal_patch_size=2, in_channels=3, initializer_range=0.2),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
        initializer_range=0.2)
    torch.manual_seed(tiny_models.SEED)
    model = Qwen2VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    processor = QwenInputs(tokenizer, Qwen2VLImageProcessorPil(min_pixels=32 * 32, max_pixels=64 * 64, patch_size=8,
                                                               merge_size=2, temporal_patch_size=2))
    loaded = LoadedModel(model=model, tokenizer=tokenizer, device=torch.device("cpu"),
                         eos_token_ids=frozenset({tokenizer.eos_token_id}), context_length=512,
                         pad_token_id=tokenizer.pad_token_id, processor=processor)
    builder = RequestBuilder(ModelFacts(tokenizer=tokenizer, context_length=512, eos_token_ids=loaded.eos_token_ids,
                                        chat_template=None, stop=[], tool_format="hermes", reasoning_tags=None,
                                        abilities=("chat", "vision"), processor=processor))
    return model, processor, loaded, builder


def chat(text, *images):
    return [{"role": "user", "content": [*({"type": "image_url", "image_url": {"url": i}} for i in images),
                                         {"type": "text", "text": text}]}]


def reference(model, processor, messages) -> str:
    from hangar_runtime.engines.transformers_llm.vision_inputs import split_images

    parts, images = split_images(messages)
    prompt = processor.apply_chat_template(parts, add_generation_prompt=True, tokenize=False)
    inputs = processor([prompt], images=images or None)
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=MAX_TOKENS, min_new_tokens=MAX_TOKENS, do_sample=False)
    return processor.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True,
                                      clean_up_tokenization_spaces=False)


def test_image_and_text_sequences_batched_at_different_steps_answer_as_generate_alone(qwen):
    model, processor, loaded, builder = qwen
    calls = [chat("What is this?", png(1)), chat("Hello there"), chat("And this?", png(2, (64, 40))),
             chat("Two of them.", png(3), png(4))]
    expected = [reference(model, processor, messages) for messages in calls]
    assert len(set(expected)) == len(expected)
    config = {"max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True}
    batcher = Batcher(loaded, lambda method, args, kwargs, sink: Sequence(builder.chat(*args, **kwargs), sink, loaded.tokenizer),
                      frozenset({"chat"}), max_batch_size=8)
    sinks = []
    for i, messages in enumerate(calls):
        sink = ListSink(i, stream=False)
        batcher.submit("chat", [messages], {"generate_config": config}, sink)
        sinks.append(sink)
        batcher.step()
        batcher.step()  # a decode between arrivals: later calls join a batch mid-way
    steps = 0
    while batcher.has_work():
        batcher.step()
        steps += 1
        assert steps < 200
    assert [s.text() for s in sinks] == expected
