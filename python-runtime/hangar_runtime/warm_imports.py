"""What a warm spare imports while it waits for its LOAD (`--preload
hangar_runtime.warm_imports`, the control plane's default): everything the
torch-based engines import when they load, plus the model classes of the most
common architectures and one small torch operation. A launch that takes the spare
then pays for reading its weights and little else.

Measured on a 2-core machine: `import torch, transformers` is a third of a cold
load; `from transformers import AutoModelForCausalLM` (transformers' lazy modules)
and the first load's imports of the model's own modules are the rest. Each step is
optional: what is not installed is skipped, the spare is only less warm."""

import importlib
import logging
import time

log = logging.getLogger("hangar_runtime.warm")

MODULES = (
    "torch",
    "transformers",
    # The engines' own modules, which import transformers' Auto classes and tokenizers.
    "hangar_runtime.engines.transformers_llm.loaded_model",
    "hangar_runtime.engines.transformers_llm.batcher",
    "hangar_runtime.engines.transformers_llm.request_builder",
    "hangar_runtime.engines.transformers_llm.sequence",
    "hangar_runtime.engines.sentence_transformers.loaded_encoder",
    # Model classes of the architectures most of the built-in catalog uses.
    "transformers.models.llama.modeling_llama",
    "transformers.models.qwen2.modeling_qwen2",
    "transformers.models.bert.modeling_bert",
    "transformers.models.xlm_roberta.modeling_xlm_roberta",
)


def _warm() -> None:
    started = time.monotonic()
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a missing library only makes the spare less warm
            log.info("warm import of %s skipped: %s", name, exc)
    try:
        import torch

        # The first operation sets up torch's thread pool and kernels.
        (torch.ones(16, 16) @ torch.ones(16, 16)).sum().item()
    except Exception as exc:  # noqa: BLE001
        log.info("torch warm-up skipped: %s", exc)
    log.info("warm imports done in %.2fs", time.monotonic() - started)


_warm()
