"""The `vllm` engine (GPU hosts): the model is served by vLLM's AsyncLLMEngine,
with our chat templates, stop handling and tool-call parsing on top, so it answers
exactly the protocol's `chat` and `generate` (docs/runtime-protocol.md). Chosen
only where `vllm` imports; the control plane's engine table says so elsewhere."""

from ...errors import InvalidModel
from ..base import BatchScheduler, Engine, Progress
from ..hub_download import DOWNLOAD_SHARE, model_folder
from ..transformers_llm.chat_format import render_chat
from ..transformers_llm.generate_config import parse_generate_config
from ..transformers_llm.tool_calls import tool_call_format
from .sampling_params import sampling_kwargs
from .scheduler import VllmScheduler, _Call


class VllmEngine(Engine):
    name = "vllm"

    def __init__(self):
        self.abilities: tuple[str, ...] = ()
        self._scheduler: VllmScheduler | None = None
        self._context_length = 0

    def load(self, spec: dict, progress: Progress) -> None:
        from transformers import AutoTokenizer
        from vllm import AsyncEngineArgs, AsyncLLMEngine, SamplingParams

        engine_kwargs = dict(spec.get("engine_kwargs") or {})
        path = str(model_folder(spec, progress))
        progress(DOWNLOAD_SHARE, "load", f"Starting vLLM on {path}")
        args = {"model": path, "tokenizer": path, "dtype": engine_kwargs.pop("dtype", "auto")}
        if spec.get("context_length"):
            args["max_model_len"] = int(spec["context_length"])
        # Everything else a user passed at launch (gpu_memory_utilization,
        # tensor_parallel_size, max_num_seqs, ...) is vLLM's own engine argument.
        args.update({k: v for k, v in engine_kwargs.items() if k not in ("max_batch_size",)})
        try:
            engine_args = AsyncEngineArgs(**args)
        except TypeError as exc:
            raise InvalidModel(f"vLLM does not take these launch arguments: {exc}") from exc
        engine = AsyncLLMEngine.from_engine_args(engine_args)
        tokenizer = AutoTokenizer.from_pretrained(path)
        self._context_length = int(args.get("max_model_len") or getattr(tokenizer, "model_max_length", 4096))
        template = spec.get("chat_template") if isinstance(spec.get("chat_template"), str) else None
        abilities = spec.get("model_ability") or ["generate", "chat"]
        self.abilities = tuple(str(a) for a in abilities)
        tool_format = tool_call_format(spec.get("tool_parser"), spec.get("model_family"))
        stop = [s for s in (spec.get("stop") or []) if isinstance(s, str)]
        stop_ids = [i for i in (spec.get("stop_token_ids") or []) if isinstance(i, int)]

        def build_call(method, call_args, kwargs, sink) -> _Call:
            config = parse_generate_config(kwargs.get("generate_config"))
            config.stop = [*config.stop, *stop]
            config.stop_token_ids = [*config.stop_token_ids, *stop_ids]
            tools = kwargs.get("tools") if kwargs.get("tool_choice") != "none" else None
            if method == "chat":
                (messages,) = call_args
                prompt = render_chat(tokenizer, messages, template=template, tools=tools,
                                     chat_template_kwargs=kwargs.get("chat_template_kwargs"))
            else:
                (prompt,) = call_args
                if not isinstance(prompt, str):
                    raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")
            prompt_tokens = len(tokenizer(prompt)["input_ids"])
            params = SamplingParams(**sampling_kwargs(config, prompt_tokens=prompt_tokens,
                                                      context_length=self._context_length))
            parse_tools = method == "chat" and bool(tools) and "tools" in self.abilities
            return _Call(sink, prompt, params, tool_format if parse_tools else None)

        self._scheduler = VllmScheduler(engine, build_call)
        progress(1.0, "load", f"vLLM serves {path}")

    def describe(self) -> dict:
        return {"context_length": self._context_length}

    def methods(self) -> dict:
        # Always served through the scheduler; there is no one-at-a-time path.
        return {"chat": None, "generate": None}

    def scheduler(self) -> BatchScheduler | None:
        return self._scheduler

