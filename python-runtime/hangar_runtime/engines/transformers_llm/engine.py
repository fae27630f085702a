"""The `transformers` engine: load (folder or hub download), describe, and the
`chat` and `generate` methods, served by the continuous batcher (and
`count_tokens`, which runs alone).

Imports here stay light: PyTorch and transformers (seconds to import) are loaded
after the model files are found, so a download that cannot start fails fast."""

import os

from ...errors import InvalidModel
from ..base import BatchScheduler, Engine, Progress
from ..hub_download import DOWNLOAD_SHARE, LLM_NOT_DOWNLOADED, model_folder
from ..llm_abilities import NOT_SERVED
from ..lean_imports import import_transformers_without_sklearn
from ..tokenizer_methods import TokenizerMethods
from .tool_calls import tool_call_format

DEFAULT_MAX_BATCH_SIZE = 8
METHODS = frozenset({"chat", "generate"})


class TransformersLLMEngine(Engine):
    name = "transformers"

    def __init__(self):
        self.abilities: tuple[str, ...] = ()
        self._context_length = 0
        self._adapters: tuple[str, ...] = ()
        self._batcher = None
        self._builder = None

    def load(self, spec: dict, progress: Progress) -> None:
        engine_kwargs = spec.get("engine_kwargs") or {}
        if not isinstance(engine_kwargs, dict):
            raise InvalidModel(f"engine_kwargs must be a map, got {type(engine_kwargs).__name__}")
        max_batch_size = _max_batch_size(engine_kwargs)
        chat_template = _optional_string(spec, "chat_template")
        stop = _stop_strings(spec.get("stop"))
        tool_format = tool_call_format(_optional_string(spec, "tool_parser"), _optional_string(spec, "model_family"))
        reasoning_tags = _reasoning_tags(spec)
        path = model_folder(spec, progress, ignore_patterns=LLM_NOT_DOWNLOADED, prefer_safetensors=True)
        if not os.path.isfile(os.path.join(path, "config.json")):
            # Said before the tokenizer fails on it ("Couldn't instantiate the backend tokenizer").
            raise InvalidModel(f"{path} has no config.json: it is not a Transformers model folder")
        progress(DOWNLOAD_SHARE, "load", f"Loading {path}")
        import_transformers_without_sklearn()

        from .batcher import Batcher
        from .loaded_model import load_model
        from .request_builder import ModelFacts, RequestBuilder, max_token_bytes
        from .sequence import Sequence

        from .chat_format import check_template
        try:
            check_template(chat_template)
        except ValueError as exc:
            raise InvalidModel(str(exc)) from exc
        loaded = load_model(path, spec, engine_kwargs)
        tokenizer = loaded.tokenizer
        renderer = loaded.processor or tokenizer
        self.abilities = _abilities(spec.get("model_ability"), has_template=bool(
            chat_template or getattr(renderer, "chat_template", None)), vision=loaded.processor is not None)
        if "reasoning" not in self.abilities:
            reasoning_tags = None
        self._context_length = loaded.context_length
        self._adapters = loaded.adapters
        builder = RequestBuilder(ModelFacts(
            tokenizer=tokenizer, context_length=loaded.context_length, eos_token_ids=loaded.eos_token_ids,
            chat_template=chat_template, stop=stop, tool_format=tool_format, reasoning_tags=reasoning_tags,
            abilities=self.abilities, max_token_bytes=max_token_bytes(tokenizer), adapters=loaded.adapters,
            processor=loaded.processor, vocab_size=_vocab_size(loaded.model, tokenizer)))
        builders = {"chat": builder.chat, "generate": builder.generate}
        self._tokenizer_methods = TokenizerMethods(
            tokenizer, loaded.context_length,
            lambda messages, tools, kwargs, opens, continues: builder.chat(
                messages, None, tools=tools, chat_template_kwargs=kwargs, add_generation_prompt=opens,
                continue_final_message=continues).prompt_ids,
            chat_template or getattr(renderer, "chat_template", None), builder.vocab_size)
        self._builder = builder

        def make_sequence(method, args, kwargs, sink):
            return Sequence(builders[method](*args, **kwargs), sink, tokenizer)

        def stage_sequence(method, args, kwargs, sink):
            # A chat's template renders now, on the work loop; its tokens may come later, apart.
            if method != "chat":
                return None
            finish = builder.chat_stage(*args, **kwargs)
            return lambda: Sequence(finish(), sink, tokenizer)

        self._batcher = Batcher(loaded, make_sequence, METHODS, max_batch_size, stage_sequence=stage_sequence)
        progress(1.0, "load", f"Loaded {path} on {loaded.device}")

    def describe(self) -> dict:
        # lora_names only with adapters: a model without them describes itself as before.
        return {"context_length": self._context_length, **({"lora_names": list(self._adapters)} if self._adapters else {})}

    def methods(self) -> dict:
        # The tokenizer's methods (vLLM's tokenizer routes) run alone on the work loop, as count_tokens.
        return {"chat": self.chat, "generate": self.generate, "count_tokens": self.count_tokens,
                **self._tokenizer_methods.methods()}

    def count_tokens(self, messages, tools=None, tool_choice=None, chat_template_kwargs=None,
                     add_generation_prompt=True, continue_final_message=False) -> dict:
        """The prompt tokens a chat call with these arguments would count in its usage
        (Anthropic's count_tokens): the same template, tokens and refusals, no generation.
        It runs on the work loop between batch steps, so it never waits for a batch slot."""
        request = self._builder.chat(messages, None, tools=tools, tool_choice=tool_choice,
                                     chat_template_kwargs=chat_template_kwargs,
                                     add_generation_prompt=add_generation_prompt,
                                     continue_final_message=continue_final_message)
        return {"prompt_tokens": len(request.prompt_ids)}

    def scheduler(self) -> BatchScheduler | None:
        return self._batcher

    # The runtime hands these calls to the scheduler; called directly (an
    # embedding program, a test), each runs alone to its RESULT value.

    def chat(self, *args, **kwargs) -> dict:
        return self._run_alone("chat", args, kwargs)

    def generate(self, *args, **kwargs) -> dict:
        return self._run_alone("generate", args, kwargs)

    def _run_alone(self, method: str, args, kwargs) -> dict:
        sink = _ResultSink()
        self._batcher.submit(method, list(args), dict(kwargs), sink)
        while not sink.closed:
            self._batcher.step()
        if sink.error is not None:
            raise sink.error
        return sink.value


class _ResultSink:
    """A CallSink that keeps a non-stream call's RESULT value (or its error)."""

    call_id = 0
    stream = False
    alone = True

    def __init__(self):
        self.closed = False
        self.value = None
        self.error: BaseException | None = None

    def chunk(self, value) -> None:
        raise RuntimeError("chunk() on a non-stream call")

    def finish(self, value=None) -> None:
        self.value, self.closed = value, True

    def fail(self, exc: BaseException, kind: str | None = None) -> None:
        self.error, self.closed = exc, True


def _max_batch_size(engine_kwargs: dict) -> int:
    value = engine_kwargs.get("max_batch_size", DEFAULT_MAX_BATCH_SIZE)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidModel(f"engine_kwargs.max_batch_size must be a positive integer, got {value!r}")
    return value


def _optional_string(spec: dict, key: str) -> str | None:
    value = spec.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidModel(f"{key} must be a string, got {type(value).__name__}")
    return value


def _stop_strings(value) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise InvalidModel(f"stop must be a string or a list of strings, got {value!r}")
    return list(items)


def _reasoning_tags(spec: dict) -> tuple[str, str] | None:
    start, end = _optional_string(spec, "reasoning_start_tag"), _optional_string(spec, "reasoning_end_tag")
    return (start, end) if start and end else None


def _abilities(value, has_template: bool, vision: bool = False) -> tuple[str, ...]:
    if value is None:
        # No registration to say: what the files can do.
        return ("generate", "chat") + (("vision",) if vision else ()) if has_template else ("generate",)
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise InvalidModel(f"model_ability must be a list of strings, got {value!r}")
    # No LLM engine here embeds (embeddings come from embedding models): llm_abilities.py.
    return tuple(a for a in value if a not in NOT_SERVED)


def _vocab_size(model, tokenizer) -> int:
    """The token ids a prompt may hold: the tokenizer's, and never past the model's
    embedding (an id beyond it fails the forward pass, on CUDA with a device assert)."""
    embeddings = model.get_input_embeddings()
    rows = getattr(embeddings, "num_embeddings", None)
    return min(len(tokenizer), rows) if isinstance(rows, int) else len(tokenizer)
