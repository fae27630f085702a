"""One call's generation: the tokens it has, when it ends, and what it sends.

The batcher feeds it one chosen token per step (accept); everything from token
to wire happens here: end tokens, text, stop strings, tool calls, echo, usage,
and the stream's CHUNKs or the one RESULT (docs/runtime-protocol.md)."""

from dataclasses import dataclass

import torch

from ..base import CallSink
from .detokenizer import Detokenizer
from .generate_config import GenerateConfig
from .sampling import Sampler
from .stopping import StopScanner
from .tool_calls import ToolCallText


@dataclass
class Request:
    prompt_ids: list[int]
    config: GenerateConfig
    max_tokens: int  # already capped by the context
    stop: list[str]  # the registration's and the request's
    stop_token_ids: frozenset[int]  # the model's end tokens and the request's
    llama3_tools: bool | None = None  # None: no tool-call parsing
    echo: str = ""  # generate with echo: the prompt text, sent before the completion


class Sequence:
    def __init__(self, request: Request, sink: CallSink, tokenizer):
        self.request = request
        self.sink = sink
        self.sampler = Sampler(request.config)
        self.history = list(request.prompt_ids)  # prompt + generated: penalties and cache rebuilds
        self.pending: int | None = None  # chosen, not yet fed to the model
        self.cached = 0  # this sequence's real tokens in the batch's KV cache
        self.generated = 0
        self._finished = False
        self._detok = Detokenizer(tokenizer, request.prompt_ids)
        self._stops = StopScanner(request.stop)
        self._tools = ToolCallText(request.llama3_tools) if request.llama3_tools is not None else None
        self._echo = request.echo
        self._text: list[str] = []  # a non-stream call's text, sent at the end

    @property
    def done(self) -> bool:
        """Finished, failed or aborted: the batcher drops it at its next step."""
        return self._finished or self.sink.closed

    def choose(self, logits: torch.Tensor, batch_argmax: int) -> int:
        if self.sampler.plain_greedy:
            return batch_argmax
        return self.sampler.choose(logits, self.history)

    def accept(self, token: int) -> None:
        if self._echo:
            self._send(self._echo)
            self._echo = ""
        self.generated += 1
        self.history.append(token)
        self.pending = token
        if token in self.request.stop_token_ids:
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
        tool_calls: list[dict] = []
        if self._tools is not None:
            rest, tool_calls = self._tools.finish()
            self._send(rest)
        final = {"finish_reason": "tool_calls" if tool_calls else reason, "usage": self._usage()}
        if tool_calls:
            final["tool_calls"] = tool_calls
        final["text"] = "" if self.sink.stream else "".join(self._text)
        self.sink.finish(final)

    def _usage(self) -> dict:
        prompt = len(self.request.prompt_ids)
        return {"prompt_tokens": prompt, "completion_tokens": self.generated, "total_tokens": prompt + self.generated}

    def _emit(self, text: str) -> None:
        if self._tools is not None:
            text = self._tools.feed(text)
        self._send(text)

    def _send(self, text: str) -> None:
        if not text:
            return
        if self.sink.stream:
            self.sink.chunk({"text": text})
        else:
            self._text.append(text)
