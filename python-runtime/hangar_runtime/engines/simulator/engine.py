"""The `simulator` engine (docs/simulator.md): serves `chat` and `generate` with no
model and no GPU, generating deterministic text at a GPU-like cadence, through the
same runtime process, protocol and control plane as every engine. It exists for
load tests of a deployment; it is never evidence of how a real engine behaves."""

import logging

from ..base import BatchScheduler, Engine, Progress
from ..token_prompt import is_token_prompt, token_prompt
from ..transformers_llm.generate_config import parse_generate_config
from .options import parse_options, unread_options
from .request import SimRequest
from .scheduler import SimulatorScheduler
from .text import chat_prompt_tokens, count_prompt_tokens, token_text
from .tool_call import forced_tool_call

log = logging.getLogger("hangar_runtime.simulator")


class SimulatorEngine(Engine):
    name = "simulator"
    # It stands in for a GPU engine: its steps are timers, not arithmetic, and a step
    # made late by a busy control plane would show up as Hangar's gap in load tests.
    cpu_bound = False

    def __init__(self):
        self.abilities: tuple[str, ...] = ("chat", "generate")
        self._scheduler: SimulatorScheduler | None = None
        self._options = None
        self._context_length = 0

    def load(self, spec: dict, progress: Progress) -> None:
        self._options = parse_options(spec.get("engine_kwargs"))
        unread = unread_options(spec.get("engine_kwargs"))
        if unread:
            log.warning("the simulator reads only step_ms, ttft_ms and max_batch; it ignores %s", ", ".join(unread))
        # It has no context of its own; it takes the registration's and holds requests to
        # it as a GPU engine does: an answer ends with "length" where the context is full.
        self._context_length = int(spec.get("context_length") or 131072)
        abilities = spec.get("model_ability") or ["chat", "generate"]
        # tools: it answers a forced tool_choice with a call (tool_call.py), text otherwise.
        self.abilities = tuple(str(a) for a in abilities if a in ("chat", "generate", "tools"))
        self._scheduler = SimulatorScheduler(self._options, self._build_request)
        progress(1.0, "load", "Simulator ready (step %g ms, first token after %g ms, batch %d)" % (
            self._options.step_ms, self._options.ttft_ms, self._options.max_batch))

    def describe(self) -> dict:
        o = self._options
        return {"context_length": self._context_length, "simulator": {"step_ms": o.step_ms, "ttft_ms": o.ttft_ms,
                                                           "max_batch": o.max_batch}}

    def methods(self) -> dict:
        # chat and generate are always served through the scheduler; count_tokens runs alone.
        return {"chat": None, "generate": None, "count_tokens": self._count_tokens}

    def _count_tokens(self, messages, tools=None, tool_choice=None, chat_template_kwargs=None,
                      add_generation_prompt=True, continue_final_message=False) -> dict:
        """What a chat call's usage would count as its prompt (a word a token), refused alike."""
        prompt_tokens = chat_prompt_tokens(messages)
        self._room(prompt_tokens)
        return {"prompt_tokens": prompt_tokens}

    def _room(self, prompt_tokens: int) -> int:
        """The same room as the transformers and vLLM engines give (request_builder.py,
        sampling_params.py): a max_tokens past the context is cut to what is left."""
        room = self._context_length - prompt_tokens
        if room < 1:
            raise ValueError(f"The prompt is {prompt_tokens} tokens, which leaves no room in the model's context "
                             f"of {self._context_length} tokens")
        return room

    def scheduler(self) -> BatchScheduler | None:
        return self._scheduler

    def _build_request(self, method: str, args: list, kwargs: dict, sink, first_step_at: float) -> SimRequest:
        raw = kwargs.get("generate_config")
        config = parse_generate_config(raw)
        top = _top_logprobs(raw if isinstance(raw, dict) else {})
        if method == "chat":
            if len(args) != 1:
                raise TypeError("chat takes one argument, the messages")
            prompt_tokens, echo = chat_prompt_tokens(args[0]), ""
            tool_call = forced_tool_call(kwargs.get("tools"), kwargs.get("tool_choice"))
        else:
            if len(args) == 1 and is_token_prompt(args[0]):
                # Token ids: its vocabulary is its 16 words, each id naming WORDS[id % 16].
                ids = token_prompt(args[0], 1 << 31, context_length=self._context_length)
                prompt_tokens, echo = len(ids), "".join(token_text(i) for i in ids) if config.echo else ""
            elif len(args) != 1 or not isinstance(args[0], str):
                raise TypeError("generate takes one argument, the prompt string or a list of token ids")
            else:
                prompt_tokens, echo = count_prompt_tokens(args[0]), args[0] if config.echo else ""
            tool_call = None
        room = self._room(prompt_tokens)
        return SimRequest(sink, config, prompt_tokens, first_step_at, top, room, echo_text=echo, tool_call=tool_call)


def _top_logprobs(raw: dict) -> int | None:
    """`logprobs` (true, or a count as in OpenAI's completions) and `top_logprobs`."""
    asked, top = raw.get("logprobs"), raw.get("top_logprobs")
    if asked is None or asked is False:
        return None
    if asked is True:
        count = top if top is not None else 0
    else:
        count = asked
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 20:
        raise ValueError(f"top_logprobs must be an integer from 0 to 20, got {count!r}")
    return count
