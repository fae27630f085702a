"""The diffusers engine where diffusers is missing (these machines): a launch fails
with a message that says so, and the request checks that need no model still hold.
Generation itself is tested end to end by test/integration/media-diffusers.test.ts,
which runs where diffusers imports."""

import importlib.util

import pytest

from hangar_runtime.engines.diffusers_engine.engine import DiffusersEngine, _size, apply_loras
from hangar_runtime.errors import InvalidModel

HAS_DIFFUSERS = importlib.util.find_spec("diffusers") is not None


@pytest.mark.skipif(HAS_DIFFUSERS, reason="diffusers is installed here; the missing-package path cannot be seen")
def test_load_without_diffusers_says_what_is_missing():
    with pytest.raises(InvalidModel, match="needs the diffusers Python package"):
        DiffusersEngine().load({"model_uri": "/nonexistent"}, lambda *a, **k: None)


def test_sizes_are_read_in_openai_and_xinference_spelling():
    assert _size("512x768") == (512, 768)
    assert _size("1024*1024") == (1024, 1024)
    for bad in ("big", "10x10", "512x"):
        with pytest.raises(ValueError, match="size must"):
            _size(bad)


def test_generation_arguments_are_checked_before_the_pipeline_runs():
    engine = DiffusersEngine()
    with pytest.raises(ValueError, match="prompt must be a non-empty string"):
        engine._call_args("  ", 1, None, {})
    # A variation needs no prompt (OpenAI's create_variation sends none); a generation does.
    assert engine._call_args(None, 1, None, {}, prompt_required=False)["prompt"] == ""
    with pytest.raises(ValueError, match="prompt must be a non-empty string"):
        engine._call_args(None, 1, None, {})
    with pytest.raises(ValueError, match="n must be an integer from 1 to 10"):
        engine._call_args("a cat", 11, None, {})
    with pytest.raises(ValueError, match="Unknown generation parameter"):
        engine._call_args("a cat", 1, None, {"callback": "x"})
    engine._defaults = {"num_inference_steps": 1, "guidance_scale": 0.0}
    call = engine._call_args("a cat", 2, "64x128", {"guidance_scale": 2.0})
    assert call == {"num_inference_steps": 1, "guidance_scale": 2.0, "prompt": "a cat", "width": 64, "height": 128}


class CallRecordingPipeline:
    """A call-compatibility double of a diffusers pipeline: it records the LoRA calls
    and proves that they are well formed (the methods and keyword arguments diffusers'
    LoraLoaderMixin takes), nothing more. diffusers does not install on these machines."""

    def __init__(self, fail_on: str | None = None):
        self.calls: list[tuple] = []
        self._fail_on = fail_on

    def load_lora_weights(self, pretrained_model_name_or_path_or_dict, adapter_name=None, **kwargs):
        if adapter_name == self._fail_on:
            raise OSError("no adapter_config here")
        self.calls.append(("load_lora_weights", pretrained_model_name_or_path_or_dict, adapter_name, kwargs))

    def fuse_lora(self, lora_scale=1.0, **kwargs):
        self.calls.append(("fuse_lora", lora_scale, kwargs))


def test_image_loras_are_loaded_with_their_kwargs_then_fused():
    pipeline = CallRecordingPipeline()
    apply_loras(pipeline, {"lora_list": [{"lora_name": "ink", "local_path": "/l/ink"}, {"lora_name": "oil", "local_path": "/l/oil"}],
                           "image_lora_load_kwargs": {"weight_name": "w.safetensors"}, "image_lora_fuse_kwargs": {"lora_scale": 0.7}})
    assert pipeline.calls == [("load_lora_weights", "/l/ink", "ink", {"weight_name": "w.safetensors"}),
                              ("load_lora_weights", "/l/oil", "oil", {"weight_name": "w.safetensors"}),
                              ("fuse_lora", 0.7, {})]
    untouched = CallRecordingPipeline()
    apply_loras(untouched, None)
    apply_loras(untouched, {"lora_list": []})
    assert untouched.calls == []
    with pytest.raises(InvalidModel, match=r"lora_list.1 \(LoRA adapter oil at /l/oil\) cannot be loaded"):
        apply_loras(CallRecordingPipeline(fail_on="oil"), {"lora_list": [{"lora_name": "ink", "local_path": "/l/ink"},
                                                                        {"lora_name": "oil", "local_path": "/l/oil"}]})
