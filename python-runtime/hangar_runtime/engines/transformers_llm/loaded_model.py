"""The tokenizer and weights on their device, and the facts about them that
generation needs (end tokens, context length, padding id)."""

import logging
from dataclasses import dataclass

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

from ...errors import InvalidModel, exception_text
from ..torch_device import pick_device
from .lora_adapters import lora_list

log = logging.getLogger("hangar_runtime.transformers")

_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
_FALLBACK_CONTEXT = 2048


@dataclass
class LoadedModel:
    model: torch.nn.Module
    tokenizer: object
    device: torch.device
    eos_token_ids: frozenset[int]  # any of them ends a sequence ("stop")
    context_length: int
    pad_token_id: int  # fills left padding; masked out, so any real id does
    adapters: tuple[str, ...] = ()  # LoRA adapters loaded with peft, by name
    # A vision model's processor (images to pixel values, prompt expansion); None: text only.
    processor: object = None


def pick_dtype(requested, device: torch.device):
    if requested in (None, ""):
        # Half precision on CPU is slow or unsupported; on a GPU the checkpoint's own dtype.
        return torch.float32 if device.type == "cpu" else "auto"
    if requested == "auto":
        return "auto"
    if requested not in _DTYPES:
        raise InvalidModel(f"engine_kwargs.torch_dtype must be one of auto, {', '.join(_DTYPES)}; got {requested!r}")
    return _DTYPES[requested]


def load_model(path: str, spec: dict, engine_kwargs: dict) -> LoadedModel:
    # Their progress bars would reach the control plane's log as garbled lines.
    transformers.utils.logging.disable_progress_bar()
    device = pick_device()
    dtype = pick_dtype(engine_kwargs.get("torch_dtype"), device)
    trust = bool(engine_kwargs.get("trust_remote_code", False))
    vision = is_vision_model(path, spec, trust)
    processor = None
    try:
        if vision:
            # Images need the model's processor and its image-text-to-text class
            # (LLaVA, Qwen2-VL, Gemma 3, ...); the tokenizer is the processor's.
            from transformers import AutoModelForImageTextToText, AutoProcessor

            processor = AutoProcessor.from_pretrained(path, trust_remote_code=trust)
            tokenizer = processor.tokenizer
            model = AutoModelForImageTextToText.from_pretrained(path, dtype=dtype, trust_remote_code=trust)
        else:
            tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, trust_remote_code=trust)
    # What a folder that is not a (supported) causal LM raises: missing or bad
    # files, an unknown architecture.
    # An ImportError: a processor part whose library is missing (Qwen2-VL's video
    # processor needs torchvision).
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise InvalidModel(f"Cannot load {path} with transformers{' as a vision model' if vision else ''}: "
                           f"{type(exc).__name__}: {exception_text(exc)}") from exc
    model = model.to(device).eval()
    log.info("loaded %s on %s (%s)", type(model).__name__, device, next(model.parameters()).dtype)
    base = model
    adapters = lora_list(spec)
    if adapters:
        model = load_adapters(model, adapters, device)
    return LoadedModel(model=model, tokenizer=tokenizer, device=device,
                       eos_token_ids=frozenset(_eos_ids(tokenizer, base, spec)),
                       context_length=_context_length(base, spec),
                       pad_token_id=_pad_id(tokenizer, base),
                       adapters=tuple(name for name, _ in adapters), processor=processor)


def is_vision_model(path: str, spec: dict, trust: bool) -> bool:
    """A registration with the vision ability, or (no registration) a checkpoint whose
    config has a vision tower. A vision checkpoint registered without `vision` loads
    as text only where its architecture allows."""
    abilities = spec.get("model_ability")
    if isinstance(abilities, list):
        return "vision" in abilities
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(path, trust_remote_code=trust)
    except (OSError, ValueError, KeyError):
        return False  # the load proper says what is wrong
    return getattr(config, "vision_config", None) is not None


def load_adapters(model, adapters: list[tuple[str, str]], device):
    """Every adapter at once, with peft: a request picks one by name, and rows of one
    batch may use different adapters (peft's `adapter_names`)."""
    from peft import PeftModel

    wrapped = None
    for i, (name, path) in enumerate(adapters):
        try:
            if wrapped is None:
                wrapped = PeftModel.from_pretrained(model, path, adapter_name=name, is_trainable=False)
            else:
                wrapped.load_adapter(path, adapter_name=name, is_trainable=False)
        except Exception as exc:  # noqa: BLE001 - a missing or malformed adapter fails the launch, named
            raise InvalidModel(f"peft_model_config.lora_list.{i} (LoRA adapter {name} at {path}) cannot be loaded: "
                               f"{type(exc).__name__}: {exception_text(exc)}") from exc
        log.info("loaded LoRA adapter %s from %s", name, path)
    return wrapped.to(device).eval()


def _eos_ids(tokenizer, model, spec: dict) -> set[int]:
    ids = set()
    for value in (tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None),
                  spec.get("stop_token_ids")):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(v for v in value if isinstance(v, int))
    return ids


def _context_length(model, spec: dict) -> int:
    # The registration's context_length is what users were promised; the
    # model's own limit still caps it (positions past it are untrained).
    # A vision model's config nests the language model's (text_config).
    config = model.config.get_text_config()
    own = next((getattr(config, name) for name in ("max_position_embeddings", "n_positions", "seq_length")
                if isinstance(getattr(config, name, None), int)), None)
    registered = spec.get("context_length")
    candidates = [n for n in (own, registered) if isinstance(n, int) and not isinstance(n, bool) and n > 0]
    return min(candidates) if candidates else _FALLBACK_CONTEXT


def _pad_id(tokenizer, model) -> int:
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id, getattr(model.config, "pad_token_id", None)):
        if isinstance(value, int):
            return value
    return 0
