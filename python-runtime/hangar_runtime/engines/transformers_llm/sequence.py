"""One call's generation: the tokens it has, when it ends, and what it sends.

The batcher feeds it one chosen token per step (accept); everything from token
to wire happens here: end tokens, text, stop strings, reasoning, tool calls,
echo, usage, and the stream's CHUNKs or the one RESULT (docs/runtime-protocol.md).

Text flows: token -> detokenizer -> stop strings (the raw text is what a stop
string is matched against) -> reasoning split -> tool-call filter (the answer
part only) -> CHUNK or RESULT."""

from dataclasses import dataclass

import torch

from ..base import CallSink
from .detokenizer import Detokenizer
from .generate_config import GenerateConfig
from .reasoning import ReasoningSplitter
from .sampling import Sampler
from .stopping import StopScanner
from .harmony import HarmonyText
from .token_bytes import token_text_and_bytes
from .tool_calls import ToolCallText


@dataclass
class Request:
    prompt_ids: list[int]
    config: GenerateConfig
    max_tokens: int  # already capped by the context
    stop: list[str]  # the registration's and the request's
    stop_token_ids: frozenset[int]  # the model's end tokens and the request's
    tool_format: str | None = None  # tool_calls.tool_call_format's; None: no tool-call parsing
    keep_ids: frozenset[int] = frozenset()  # special tokens whose text the reply keeps (Detokenizer)
    reasoning_tags: tuple[str, str] | None = None  # (start, end); None: no reasoning split
    reasoning_open: bool = False  # the prompt already opened the reasoning
    harmony: bool = False  # a harmony model's chat (gpt-oss): its messages carry reasoning, answer and calls
    echo: str = ""  # generate with echo: the prompt text, sent before the completion
    prompt_logprobs: bool = False  # echo with logprobs: the prompt's tokens are scored (prompt_scoring.py)
    lora_name: str | None = None  # the LoRA adapter that answers; None: the base model
    # A vision model's image inputs for the prefill (pixel values, ...: vision_inputs.py).
    vision: dict | None = None


class Sequence:
    def __init__(self, request: Request, sink: CallSink, tokenizer):
        self.request = request
        self.sink = sink
        self.sampler = Sampler(request.config)
        self._tokenizer = tokenizer
        # Log-probabilities asked for (None: not): one entry per generated token, sent
        # with the next CHUNK (a stream) or all in the RESULT.
        self._top_logprobs = request.config.top_logprobs
        self._logprobs: list[dict] = []
        self.history = list(request.prompt_ids)  # prompt + generated: penalties and cache rebuilds
        self.pending: int | None = None  # chosen, not yet fed to the model
        self.cached = 0  # this sequence's real tokens in the batch's KV cache
        # M-RoPE models (Qwen2-VL): its next position is cached + this (batcher._mrope_positions).
        self.rope_delta = 0
        self.generated = 0
        self._chunked = False  # a CHUNK has been sent
        self._finished = False
        self._detok = Detokenizer(tokenizer, request.prompt_ids, request.keep_ids)
        self._stops = StopScanner(request.stop)
        self._harmony = HarmonyText() if request.harmony else None
        self._tools = ToolCallText(request.tool_format) if request.tool_format and not request.harmony else None
        self._reasoning = (ReasoningSplitter(*request.reasoning_tags, starts_inside=request.reasoning_open)
                           if request.reasoning_tags else None)
        self._echo = request.echo
        self._prompt_logprobs: list[dict] = []  # echo with logprobs: the prompt's entries (put_prompt_logprobs)
        self._stop_token: int | None = None  # the request's stop token that ended the answer
        # A non-stream call's answer and reasoning, sent as one RESULT at the end.
        self._text: list[str] = []
        self._thought: list[str] = []

    @property
    def done(self) -> bool:
        """Finished, failed or aborted: the batcher drops it at its next step."""
        return self._finished or self.sink.closed

    def choose(self, logits: torch.Tensor, batch_argmax: int) -> int:
        if self.sampler.plain_greedy:
            token = batch_argmax
        else:
            token = self.sampler.choose(logits, self.history, self.history[len(self.request.prompt_ids):])
        if self._top_logprobs is not None:
            self._logprobs.append(self._logprob_entry(logits, token))
        return token

    def _logprob_entry(self, logits: torch.Tensor, token: int) -> dict:
        """OpenAI's chat shape. The model's own distribution (before temperature and
        penalties), as vLLM reports by default."""
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        top = torch.topk(logprobs, self._top_logprobs) if self._top_logprobs else None
        return logprob_entry(self._tokenizer, token, float(logprobs[token]),
                             list(zip(top.indices.tolist(), top.values.tolist())) if top is not None else [])

    def put_prompt_logprobs(self, entries: list[dict]) -> None:
        """The prompt's entries (prompt_scoring.py): sent with the echoed prompt, before the
        first generated token's."""
        self._prompt_logprobs = entries

    def accept(self, token: int) -> None:
        if self._echo or self._prompt_logprobs:
            # A stream's echo event carries the prompt's entries only: each event's entries are
            # its own text's tokens (the first generated one goes with its text).
            generated, self._logprobs = self._logprobs, self._prompt_logprobs
            self._send(self._echo, force=bool(self._prompt_logprobs))
            self._logprobs = self._logprobs + generated
            self._echo, self._prompt_logprobs = "", []
        self.generated += 1
        self.history.append(token)
        self.pending = token
        if token in self.request.stop_token_ids:
            if token in self.request.config.stop_token_ids:
                self._stop_token = token  # one of the request's own: vLLM's stop_reason names it
            return self._finish("stop")  # the end token counts as generated, but is no text
        self._emit(self._stops.feed(self._detok.add(token)))
        if self._stops.stopped:
            return self._finish("stop")
        if self.generated >= self.request.max_tokens:
            self._finish("length")

    def fail(self, exc: BaseException, kind: str | None = None) -> None:
        self._finished = True
        self.sink.fail(exc, kind)

    def _finish(self, reason: str) -> None:
        self._finished = True
        if not self._stops.stopped:
            # Text held back for a possible stop string (or a half character)
            # turned out to be just text.
            self._emit(self._stops.feed(self._detok.flush()) + self._stops.flush())
        if self._reasoning is not None:
            thought, answer = self._reasoning.finish()
            self._send(self._tools.feed(answer) if self._tools else answer, thought)
        tool_calls: list[dict] = []
        if self._harmony is not None:
            thought, answer, calls = self._harmony.finish()
            self._send(answer, thought)
            # Calls count where the request gave tools; without them a call is not the answer asked for.
            if self.request.tool_format:
                tool_calls = calls
        if self._tools is not None:
            rest, tool_calls = self._tools.finish()
            self._send(rest)
        final = {"finish_reason": "tool_calls" if tool_calls else reason, "usage": self._usage()}
        if tool_calls:
            final["tool_calls"] = tool_calls
        elif reason == "stop" and self._stops.matched is not None:
            # Which stop string ended the text (Anthropic's `stop_sequence`).
            final["stop_sequence"] = self._stops.matched
        elif self._stop_token is not None:
            final["stop_token_id"] = self._stop_token
        final["text"] = "" if self.sink.stream else "".join(self._text)
        if self._top_logprobs is not None:
            final["logprobs"] = self._take_logprobs()
        if self._thought:
            final["reasoning_content"] = "".join(self._thought)
        self.sink.finish(final)

    def _take_logprobs(self) -> list[dict]:
        """A stream's entries since its last CHUNK; a non-stream call's, all of them."""
        taken, self._logprobs = self._logprobs, []
        return taken

    def _usage(self) -> dict:
        prompt = len(self.request.prompt_ids)
        return {"prompt_tokens": prompt, "completion_tokens": self.generated, "total_tokens": prompt + self.generated}

    def _emit(self, text: str) -> None:
        """Generated text, through the reasoning split and the tool-call filter."""
        thought = ""
        if self._harmony is not None:
            thought, text = self._harmony.feed(text)
        if self._reasoning is not None:
            thought, text = self._reasoning.feed(text)
        if self._tools is not None:
            text = self._tools.feed(text)
        self._send(text, thought)

    def _send(self, text: str, thought: str = "", force: bool = False) -> None:
        """force: a stream's CHUNK even without text (the prompt's entries of an empty echo)."""
        if not text and not thought and not force:
            return
        if self.sink.stream:
            chunk = {"text": text}
            if thought:
                chunk["reasoning_content"] = thought
            if self._top_logprobs is not None:
                chunk["logprobs"] = self._take_logprobs()
            if not self._chunked:
                # The first CHUNK says the prompt's size (Anthropic's message_start carries it).
                chunk["prompt_tokens"], self._chunked = len(self.request.prompt_ids), True
            self.sink.chunk(chunk)
        else:
            self._text.append(text)
            if thought:
                self._thought.append(thought)


def logprob_entry(tokenizer, token: int, logprob: float | None, top: list[tuple[int, float]] | None) -> dict:
    """One token's entry in OpenAI's chat shape: its text, log-probability (None for a
    prompt's first token, which nothing predicts) and the likeliest alternatives."""
    entry = token_logprob(tokenizer, token, logprob)
    entry["top_logprobs"] = None if top is None else [token_logprob(tokenizer, i, v) for i, v in top]
    return entry


def token_logprob(tokenizer, token: int, logprob: float | None) -> dict:
    text, raw = token_text_and_bytes(tokenizer, token)
    return {"token": text, "logprob": None if logprob is None else max(logprob, -9999.0), "bytes": raw}
