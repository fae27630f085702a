"""The `diffusers` engine. One DiffusionPipeline per model (`DiffusionPipeline.from_pretrained`
picks the pipeline class from the folder's model_index.json); image-to-image reuses
its weights through `AutoPipelineForImage2Image.from_pipe`. Images come back as PNG
bytes, videos as MP4 bytes (`diffusers.utils.export_to_video`); the control plane
turns them into `b64_json` or a served `url`.

Written against diffusers' documented API; diffusers does not install on the
machines this project is tested on, so its tests run only where it imports."""

import os
import tempfile

from ...errors import InvalidModel, exception_text
from ..base import Engine, Progress
from ..hub_download import DOWNLOAD_SHARE, model_folder
from ..lean_imports import import_transformers_without_sklearn
from ..media_io.image_codec import decode, to_png

MAX_IMAGES = 10  # OpenAI's limit for `n`
# Keyword arguments a request may pass on to the pipeline call (`kwargs` of the route).
PASSED_ON = frozenset({"num_inference_steps", "guidance_scale", "seed", "strength", "num_frames", "fps",
                       "negative_prompt", "width", "height"})


class DiffusersEngine(Engine):
    name = "diffusers"

    def __init__(self):
        self.abilities: tuple[str, ...] = ()
        self._pipeline = None
        self._image_to_image = None
        self._defaults: dict = {}

    def load(self, spec: dict, progress: Progress) -> None:
        try:
            import diffusers
        except ImportError as exc:
            raise InvalidModel(f"The diffusers engine needs the diffusers Python package: {exc}") from exc
        path = model_folder(spec, progress)
        progress(DOWNLOAD_SHARE, "load", f"Loading {path}")
        import_transformers_without_sklearn()  # diffusers' pipelines import transformers
        import torch

        from ..torch_device import pick_device

        device = pick_device()
        # Half precision halves GPU memory; CPUs compute float16 slowly or not at all.
        dtype = torch.float16 if device.type == "cuda" else torch.float32
        try:
            self._pipeline = diffusers.DiffusionPipeline.from_pretrained(path, torch_dtype=dtype).to(device)
        except (OSError, ValueError, KeyError) as exc:
            raise InvalidModel(f"Cannot load {path} as a diffusers pipeline: {exception_text(exc)}") from exc
        self._pipeline.set_progress_bar_config(disable=True)
        apply_loras(self._pipeline, spec.get("peft_model_config"))
        self.abilities = tuple(spec.get("model_ability") or ())
        defaults = spec.get("generate_config") or {}
        self._defaults = dict(defaults) if isinstance(defaults, dict) else {}
        progress(1.0, "load", f"Loaded {type(self._pipeline).__name__} from {path} on {device}")

    def describe(self) -> dict:
        return {"pipeline": type(self._pipeline).__name__}

    def methods(self) -> dict:
        methods = {}
        if "text2image" in self.abilities:
            methods["text_to_image"] = self.text_to_image
        if "image2image" in self.abilities:
            methods["image_to_image"] = self.image_to_image
        if "text2video" in self.abilities:
            methods["text_to_video"] = self.text_to_video
        return methods

    def text_to_image(self, prompt, n=1, size=None, **kwargs) -> dict:
        call = self._call_args(prompt, n, size, kwargs)
        result = self._pipeline(num_images_per_prompt=n, **call)
        return {"images": [to_png(image) for image in result.images]}

    def image_to_image(self, image, prompt, n=1, size=None, **kwargs) -> dict:
        call = self._call_args(prompt, n, size, kwargs, prompt_required=False)
        import diffusers

        if self._image_to_image is None:
            self._image_to_image = diffusers.AutoPipelineForImage2Image.from_pipe(self._pipeline)
        call.pop("width", None)
        call.pop("height", None)
        result = self._image_to_image(image=decode(image), num_images_per_prompt=n, **call)
        return {"images": [to_png(picture) for picture in result.images]}

    def text_to_video(self, prompt, n=1, **kwargs) -> dict:
        from diffusers.utils import export_to_video

        fps = kwargs.pop("fps", 8)
        call = self._call_args(prompt, n, None, kwargs)
        result = self._pipeline(num_videos_per_prompt=n, **call)
        videos = []
        with tempfile.TemporaryDirectory(prefix="hangar-video-") as folder:
            for index, frames in enumerate(result.frames):
                path = os.path.join(folder, f"video-{index}.mp4")
                export_to_video(frames, path, fps=fps)
                with open(path, "rb") as f:
                    videos.append(f.read())
        return {"videos": videos}

    def _call_args(self, prompt, n, size, kwargs, prompt_required=True) -> dict:
        # A variation (image to image) may come without a prompt: OpenAI's create_variation
        # has none, and Xinference's is Form(None). The pipeline then takes "".
        if not prompt_required and prompt is None:
            prompt = ""
        if not isinstance(prompt, str) or (prompt_required and not prompt.strip()):
            raise ValueError("prompt must be a non-empty string")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_IMAGES:
            raise ValueError(f"n must be an integer from 1 to {MAX_IMAGES}, got {n!r}")
        unknown = sorted(set(kwargs) - PASSED_ON)
        if unknown:
            raise ValueError(f"Unknown generation parameter(s) {', '.join(unknown)}; "
                             f"allowed: {', '.join(sorted(PASSED_ON))}")
        call = {**self._defaults, **kwargs, "prompt": prompt}
        if size:
            width, height = _size(size)
            call.update(width=width, height=height)
        seed = call.pop("seed", None)
        if seed is not None:
            import torch

            call["generator"] = torch.Generator(device=self._pipeline.device).manual_seed(int(seed))
        return call


def _size(size) -> tuple[int, int]:
    """OpenAI writes `1024x1024`, Xinference `1024*1024`."""
    text = str(size).replace("*", "x")
    try:
        width, height = (int(part) for part in text.split("x"))
    except ValueError as exc:
        raise ValueError(f"size must look like 1024x1024, got {size!r}") from exc
    if not (64 <= width <= 4096 and 64 <= height <= 4096):
        raise ValueError(f"size must be between 64x64 and 4096x4096, got {size!r}")
    return width, height


def apply_loras(pipeline, peft_model_config) -> None:
    """Xinference's image LoRA: every adapter of `lora_list` through the pipeline's
    `load_lora_weights` (with `image_lora_load_kwargs`), then one `fuse_lora` (with
    `image_lora_fuse_kwargs`). A failure fails the launch, naming the adapter."""
    config = peft_model_config or {}
    if not isinstance(config, dict):
        raise InvalidModel(f"peft_model_config must be a map, got {type(config).__name__}")
    adapters = config.get("lora_list") or []
    if not adapters:
        return
    load_kwargs = config.get("image_lora_load_kwargs") or {}
    fuse_kwargs = config.get("image_lora_fuse_kwargs") or {}
    if not isinstance(load_kwargs, dict) or not isinstance(fuse_kwargs, dict):
        raise InvalidModel("peft_model_config.image_lora_load_kwargs and image_lora_fuse_kwargs must be maps")
    for i, entry in enumerate(adapters):
        name = entry.get("lora_name") if isinstance(entry, dict) else None
        path = entry.get("local_path") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not isinstance(path, str):
            raise InvalidModel(f"peft_model_config.lora_list.{i}: needs lora_name and local_path")
        try:
            pipeline.load_lora_weights(path, adapter_name=name, **load_kwargs)
        except Exception as exc:  # noqa: BLE001 - named, it fails the launch
            raise InvalidModel(f"peft_model_config.lora_list.{i} (LoRA adapter {name} at {path}) cannot be loaded: "
                               f"{type(exc).__name__}: {exception_text(exc)}") from exc
    try:
        pipeline.fuse_lora(**fuse_kwargs)
    except Exception as exc:  # noqa: BLE001
        raise InvalidModel(f"The LoRA adapters cannot be fused (image_lora_fuse_kwargs): {type(exc).__name__}: "
                           f"{exception_text(exc)}") from exc
