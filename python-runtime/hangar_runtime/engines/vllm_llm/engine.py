"""The `vllm` engine (GPU hosts): the model is served by vLLM's V1 async engine
(`vllm.v1.engine.async_llm.AsyncLLM`), with our chat templates, stop handling and tool-call parsing on
top, so it answers exactly the protocol's `chat` and `generate`
(docs/runtime-protocol.md). vLLM gets the prompt's token ids (we tokenize once, for
usage and the context check) and sends deltas (`RequestOutputKind.DELTA`): each step
hands over only its new text. Chosen only where `vllm` imports; the control plane's
engine table says so elsewhere. Written for vLLM 0.12 and later (structured outputs);
the GPU image pins 0.30.0 (docker/requirements-gpu.txt)."""

import logging
import time

from ...errors import InvalidModel, field_error
from ..base import BatchScheduler, Engine, Progress
from ..llm_abilities import NOT_SERVED
from ..hub_download import DOWNLOAD_SHARE, LLM_NOT_DOWNLOADED, model_folder
from ..token_prompt import is_token_prompt, token_prompt
from ..tokenizer_methods import TokenizerMethods
from ..transformers_llm.chat_format import render_chat
from ..transformers_llm.vision_inputs import MAX_IMAGES, TEXT_ONLY, has_images, split_images
from ..transformers_llm.generate_config import parse_generate_config
from ..transformers_llm.tool_calls import tool_call_format
from ..transformers_llm.lora_adapters import lora_list
from ..transformers_llm.request_builder import max_token_bytes, refuse_long_prefix, refuse_unfitting_prompt
from .forced_tools import ForcedToolCall
from .sampling_params import prompt_room, sampling_kwargs, structured_output_fields, top_logprobs
from .scheduler import VllmScheduler, _Call

log = logging.getLogger("hangar_runtime.vllm")


# What docker/requirements-gpu.txt installs (docs/decisions.md, "vLLM release").
PINNED_VLLM = "vllm 0.30.0"
# Moving a large model's weights between GPU and host memory takes seconds, not minutes.
_SLEEP_TIMEOUT_S = 300.0


def _engine_class():
    from vllm.v1.engine.async_llm import AsyncLLM

    return AsyncLLM


class VllmEngine(Engine):
    name = "vllm"

    def __init__(self):
        self.abilities: tuple[str, ...] = ()
        self._scheduler: VllmScheduler | None = None
        self._engine = None
        self._context_length = 0
        self._adapters: tuple[str, ...] = ()
        self._sleep_mode = False
        self._count_tokens = None

    def load(self, spec: dict, progress: Progress) -> None:
        from transformers import AutoTokenizer
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.inputs import TokensPrompt
        from vllm.sampling_params import RequestOutputKind, SamplingParams
        try:
            # vLLM 0.12 replaced GuidedDecodingParams (SamplingParams.guided_decoding) with these.
            from vllm.sampling_params import StructuredOutputsParams
        except ImportError as exc:
            raise InvalidModel(f"This vLLM is older than 0.12 (no StructuredOutputsParams); Hangar's vLLM engine "
                               f"needs 0.12 or later, and the GPU image pins {PINNED_VLLM}") from exc

        engine_kwargs = dict(spec.get("engine_kwargs") or {})
        path = str(model_folder(spec, progress, ignore_patterns=LLM_NOT_DOWNLOADED, prefer_safetensors=True))
        progress(DOWNLOAD_SHARE, "load", f"Starting vLLM on {path}")
        args = {"model": path, "tokenizer": path, "dtype": engine_kwargs.pop("dtype", "auto")}
        if spec.get("context_length"):
            args["max_model_len"] = int(spec["context_length"])
        # Everything else a user passed at launch (gpu_memory_utilization,
        # tensor_parallel_size, max_num_seqs, ...) is vLLM's own engine argument.
        args.update({k: v for k, v in engine_kwargs.items() if k not in ("max_batch_size",)})
        if spec.get("sleep_mode") is True:
            # Asked for by the control plane for models loaded on demand on a GPU: it may
            # put them to sleep (level 1) instead of unloading them (docs/on-demand.md).
            args.setdefault("enable_sleep_mode", True)
        self._sleep_mode = args.get("enable_sleep_mode") is True
        vision = "vision" in (spec.get("model_ability") or [])
        if vision:
            # vLLM takes one image per prompt unless told more; ours are capped at MAX_IMAGES.
            args.setdefault("limit_mm_per_prompt", {"image": MAX_IMAGES})
        adapters = lora_list(spec)
        if adapters:
            # vLLM serves LoRA only when started for it, with room for every adapter.
            args.setdefault("enable_lora", True)
            args.setdefault("max_loras", len(adapters))
            rank = max(_lora_rank(path) for _, path in adapters)
            if rank > 16:
                args.setdefault("max_lora_rank", _lora_rank_slot(rank))
        try:
            engine_args = AsyncEngineArgs(**args)
        except TypeError as exc:
            raise InvalidModel(f"vLLM does not take these launch arguments: {exc}") from exc
        self._engine = _engine_class().from_engine_args(engine_args)
        # A tokenizer with code of its own (ChatGLM, InternLM2) loads only when the launch allowed it, as vLLM's does.
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=args.get("trust_remote_code") is True)
        self._context_length = _context_length(self._engine, args, tokenizer)
        template = spec.get("chat_template") if isinstance(spec.get("chat_template"), str) else None
        abilities = spec.get("model_ability") or ["generate", "chat"]
        self.abilities = tuple(str(a) for a in abilities if a not in NOT_SERVED)
        tool_format = tool_call_format(spec.get("tool_parser"), spec.get("model_family"))
        stop = [s for s in (spec.get("stop") or []) if isinstance(s, str)]
        stop_ids = [i for i in (spec.get("stop_token_ids") or []) if isinstance(i, int)]
        longest_token = max_token_bytes(tokenizer)
        self._adapters = tuple(name for name, _ in adapters)
        lora_requests = {name: _lora_request(name, i + 1, path) for i, (name, path) in enumerate(adapters)}

        def chat_ids(messages, tools, chat_template_kwargs, add_generation_prompt=True,
                     continue_final_message=False) -> tuple[list[int], list]:
            """A chat prompt's token ids and its images. Image parts become the template's
            image placeholders; vLLM's own processor expands each to the image's tokens
            (multi_modal_data), so these ids count a placeholder, not the image's tokens."""
            images = []
            if vision:
                messages, images = split_images(messages)
            elif has_images(messages):
                raise field_error("messages", TEXT_ONLY)
            prompt = render_chat(tokenizer, messages, template=template, tools=tools,
                                 chat_template_kwargs=chat_template_kwargs, parts=vision,
                                 add_generation_prompt=add_generation_prompt is not False,
                                 continue_final_message=continue_final_message is True)
            refuse_unfitting_prompt(prompt, self._context_length, longest_token)
            refuse_long_prefix(prompt, self._context_length,
                               lambda head: len(tokenizer(head, add_special_tokens=False)["input_ids"]))
            # The template already wrote the special tokens it wants.
            return tokenizer(prompt, add_special_tokens=False)["input_ids"], images

        def count_tokens(messages, tools=None, tool_choice=None, chat_template_kwargs=None,
                         add_generation_prompt=True, continue_final_message=False) -> dict:
            """The prompt tokens a chat call would count (Anthropic's count_tokens), refused alike."""
            ids, _ = chat_ids(messages, tools if tool_choice != "none" else None, chat_template_kwargs,
                              add_generation_prompt, continue_final_message)
            prompt_room(len(ids), self._context_length)
            return {"prompt_tokens": len(ids)}

        self._count_tokens = count_tokens
        self._tokenizer_methods = TokenizerMethods(
            tokenizer, self._context_length,
            lambda messages, tools, kwargs, opens, continues: chat_ids(messages, tools, kwargs, opens, continues)[0],
            template or getattr(tokenizer, "chat_template", None))

        def build_call(method, call_args, kwargs, sink) -> _Call:
            raw = kwargs.get("generate_config")
            config = parse_generate_config(raw)
            config.stop = [*config.stop, *stop]
            own_stop_ids = frozenset(config.stop_token_ids)  # the request's own, before the registration's join them
            # The registration's stop ids are the model's end tokens, which ignore_eos ignores.
            config.stop_token_ids = [*config.stop_token_ids, *([] if config.ignore_eos else stop_ids)]
            choice = kwargs.get("tool_choice")
            tools = kwargs.get("tools") if choice != "none" else None
            # "required" or a named function: structured outputs force the call (forced_tools.py).
            forced = ForcedToolCall(tools or [], choice) if choice not in (None, "auto", "none") else None
            if forced is not None and config.guide:
                raise field_error("tool_choice", "tool_choice \"required\" or a named function and response_format "
                                                 "cannot both hold the answer; send one of them")
            images = []
            echo = ""
            if method == "chat":
                (messages,) = call_args
                ids, images = chat_ids(messages, tools, kwargs.get("chat_template_kwargs"),
                                       kwargs.get("add_generation_prompt", True), kwargs.get("continue_final_message", False))
            else:
                (prompt,) = call_args
                if is_token_prompt(prompt):
                    # Token ids go to vLLM as they are (its own TokensPrompt), as its server does.
                    ids = token_prompt(prompt, len(tokenizer), context_length=self._context_length)
                    echo = tokenizer.decode(ids) if config.echo else ""
                elif isinstance(prompt, str):
                    refuse_unfitting_prompt(prompt, self._context_length, longest_token)
                    refuse_long_prefix(prompt, self._context_length, lambda head: len(tokenizer(head)["input_ids"]))
                    ids = tokenizer(prompt)["input_ids"]
                    echo = prompt if config.echo else ""
                else:
                    raise TypeError(f"prompt must be a string or a list of token ids, got {type(prompt).__name__}")
            top = top_logprobs(raw)
            # echo with logprobs: vLLM scores the prompt's own tokens too (its prompt_logprobs).
            scored = top if config.echo and method == "generate" and top is not None else None
            guide = forced.guide if forced is not None else structured_output_fields(config)
            params = SamplingParams(output_kind=RequestOutputKind.DELTA,
                                    **sampling_kwargs(config, prompt_tokens=len(ids), context_length=self._context_length,
                                                      logprobs=top),
                                    **({"prompt_logprobs": scored} if scored is not None else {}),
                                    **({"structured_outputs": StructuredOutputsParams(**guide)} if guide else {}))
            parse_tools = method == "chat" and bool(tools) and "tools" in self.abilities
            lora = config.lora_name
            if lora is not None and lora not in lora_requests:
                have = ", ".join(lora_requests) or "none (launch with peft_model_config.lora_list)"
                raise ValueError(f"lora_name: {lora} is not a LoRA adapter of this model; its adapters: {have}")
            inputs = TokensPrompt(prompt_token_ids=list(ids))
            if images:
                inputs["multi_modal_data"] = {"image": images}
            return _Call(sink, inputs, params,
                         forced if forced is not None else tool_format if parse_tools else None, top,
                         lora_requests[lora] if lora is not None else None, echo=echo, own_stop_ids=own_stop_ids,
                         first_token=tokenizer.decode([ids[0]]) if scored is not None and ids else "")

        self._scheduler = VllmScheduler(self._engine, build_call, tokenizer)
        progress(1.0, "load", f"vLLM serves {path}")

    def describe(self) -> dict:
        # lora_names only with adapters: a model without them describes itself as before.
        return {"context_length": self._context_length, **({"lora_names": list(self._adapters)} if self._adapters else {}),
                **({"sleep_mode": True} if self._sleep_mode else {})}

    def methods(self) -> dict:
        # chat and generate are always served through the scheduler; count_tokens, sleep and
        # wake_up run alone on the work loop (the control plane sends them only to an idle model).
        methods = {"chat": None, "generate": None, "count_tokens": self._count_tokens, **self._tokenizer_methods.methods()}
        if self._sleep_mode:
            methods.update(sleep=self._sleep, wake_up=self._wake_up)
        return methods

    def _sleep(self, level: int = 1) -> dict:
        """vLLM sleep mode (docs/runtime-protocol.md, "Sleep mode"): level 1 moves the
        weights to host memory and drops the KV cache; the process, its CUDA context
        and its compiled graphs stay, so waking takes well under a second for a small model."""
        # Level 2 drops the weights: waking would need them reloaded (vLLM's reload_weights),
        # which Hangar does not do, so the model would answer from garbage. Only level 1.
        if level != 1 or isinstance(level, bool):
            raise field_error("level", f"level must be 1 (weights to host memory); got {level!r}")
        started = time.monotonic()
        self._scheduler.run(self._engine.sleep(level=level), _SLEEP_TIMEOUT_S)
        self._scheduler.asleep = True
        return {"sleeping": True, "level": level, "seconds": time.monotonic() - started}

    def _wake_up(self) -> dict:
        started = time.monotonic()
        self._scheduler.run(self._engine.wake_up(tags=None), _SLEEP_TIMEOUT_S)
        self._scheduler.asleep = False
        return {"sleeping": False, "seconds": time.monotonic() - started}

    def scheduler(self) -> BatchScheduler | None:
        return self._scheduler

    def close(self) -> None:
        """Stops vLLM's engine core process (and its GPU memory) with the runtime."""
        if self._scheduler is not None:
            self._scheduler.stop()
        engine, self._engine = self._engine, None
        shutdown = getattr(engine, "shutdown", None)
        if shutdown is not None:
            shutdown()


# vLLM's EngineArgs.max_lora_rank takes only these (its MaxLoRARanks); any other is a
# validation error at start, so an adapter's rank is rounded up to the next one.
_LORA_RANK_SLOTS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def _lora_rank_slot(rank: int) -> int:
    for slot in _LORA_RANK_SLOTS:
        if slot >= rank:
            return slot
    raise InvalidModel(f"a LoRA adapter of rank {rank} is past vLLM's largest max_lora_rank "
                       f"({_LORA_RANK_SLOTS[-1]})")


def _context_length(engine, args: dict, tokenizer) -> int:
    """The context vLLM serves: its model config's max_model_len (the launch's, or the
    model's own), not the tokenizer's model_max_length, which is often a 1e30 placeholder."""
    served = getattr(getattr(engine, "model_config", None), "max_model_len", None)
    if isinstance(served, int) and served > 0:
        return served
    if args.get("max_model_len"):
        return int(args["max_model_len"])
    given = getattr(tokenizer, "model_max_length", None)
    return int(given) if isinstance(given, int) and 0 < given < 10_000_000 else 4096


def _lora_request(name: str, int_id: int, path: str):
    from vllm.lora.request import LoRARequest

    return LoRARequest(lora_name=name, lora_int_id=int_id, lora_path=path)


def _lora_rank(path: str) -> int:
    """The adapter's rank `r` from its adapter_config.json (vLLM must be started with a
    max_lora_rank at least that); 0 when it cannot be read (vLLM then says why)."""
    import json
    from pathlib import Path

    try:
        return int(json.loads((Path(path) / "adapter_config.json").read_text()).get("r") or 0)
    except (OSError, ValueError, TypeError):
        return 0
