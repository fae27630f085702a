"""One simulated generation: which token comes next, what text may go out now
(stop strings are held back while they might still match), and its final answer."""

from ..base import CallSink
from ..transformers_llm.generate_config import DEFAULT_MAX_TOKENS, GenerateConfig
from .text import logprob_entry, token_text
from .tool_call import call_tokens


class SimRequest:
    def __init__(self, sink: CallSink, config: GenerateConfig, prompt_tokens: int, first_step_at: float,
                 top_logprobs: int | None, room: int, echo_text: str = "", tool_call: dict | None = None):
        self.sink = sink
        # room: what the context leaves after the prompt (the engine checked it is >= 1).
        self.max_tokens = min(config.max_tokens or DEFAULT_MAX_TOKENS, room)
        self.stop = [s for s in config.stop if s]
        self.prompt_tokens = prompt_tokens
        self.first_step_at = first_step_at  # monotonic seconds: not before this step
        self.top_logprobs = top_logprobs  # None: no logprobs asked
        self.generated = 0
        self.text = echo_text  # everything generated so far (after an echoed prompt)
        # Stop strings are looked for in what is generated only, as the real engines do:
        # an echoed prompt that held one was cut there, and the answer with it.
        self.echoed = len(echo_text)
        self.sent = 0  # characters of self.text already sent
        self.chunked = False  # a CHUNK has been sent
        self.logprobs: list[dict] = []  # for a non-stream answer
        self.pending_logprobs: list[dict] = []  # a stream's, not yet sent
        self.finish_reason: str | None = None
        self.stop_sequence: str | None = None  # the stop string that ended the text
        # A forced tool call (tool_call.py): its steps make no text; it is the answer.
        self.tool_call = tool_call
        self.tool_steps = call_tokens(tool_call) if tool_call else 0

    @property
    def done(self) -> bool:
        return self.sink.closed

    def advance(self) -> None:
        """One engine step: one more token, then whatever may be sent."""
        if self.tool_call is not None:
            self._advance_tool_call()
            return
        index = self.generated
        self.generated += 1
        self.text += token_text(index)
        if self.top_logprobs is not None:
            (self.pending_logprobs if self.sink.stream else self.logprobs).append(
                logprob_entry(index, self.top_logprobs))
        cut = self._stop_at()
        if cut is not None:
            self.text = self.text[:cut]
            self.finish_reason = "stop"
        elif self.generated >= self.max_tokens:
            self.finish_reason = "length"
        if self.sink.stream:
            self._send_ready()
        if self.finish_reason is not None:
            self._finish()

    def _advance_tool_call(self) -> None:
        self.generated += 1
        if self.generated >= self.tool_steps:
            self.finish_reason = "tool_calls"
        elif self.generated >= self.max_tokens:
            self.finish_reason = "length"  # cut before the call was whole: no call
        if self.finish_reason is not None:
            self._finish()

    def _stop_at(self) -> int | None:
        found = [(i, s) for s in self.stop if (i := self.text.find(s, max(self.echoed, self.sent - len(s)))) >= 0]
        if not found:
            return None
        cut = min(i for i, _ in found)
        # Which one (the first given, of two at one place): Anthropic's `stop_sequence`.
        self.stop_sequence = next(s for i, s in found if i == cut)
        return cut

    def _send_ready(self) -> None:
        end = len(self.text) if self.finish_reason else len(self.text) - self._held_back()
        if end <= self.sent and not self.pending_logprobs:
            return
        value = {"text": self.text[self.sent:end]}
        if self.pending_logprobs:
            value["logprobs"], self.pending_logprobs = self.pending_logprobs, []
        if not self.chunked:
            # The first CHUNK says the prompt's size (Anthropic's message_start carries it).
            value["prompt_tokens"], self.chunked = self.prompt_tokens, True
        self.sent = max(self.sent, end)
        self.sink.chunk(value)

    def _held_back(self) -> int:
        """Characters at the end of the text that begin some stop string."""
        longest = 0
        for stop in self.stop:
            for n in range(min(len(stop) - 1, len(self.text) - max(self.sent, self.echoed)), longest, -1):
                if self.text.endswith(stop[:n]):
                    longest = n
                    break
        return longest

    def _finish(self) -> None:
        usage = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.generated,
                 "total_tokens": self.prompt_tokens + self.generated}
        calls = {"tool_calls": [self.tool_call]} if self.finish_reason == "tool_calls" else {}
        if self.finish_reason == "stop" and self.stop_sequence is not None:
            calls["stop_sequence"] = self.stop_sequence
        if self.sink.stream:
            self.sink.finish({"text": "", "finish_reason": self.finish_reason, "usage": usage, **calls})
            return
        result = {"text": self.text, "finish_reason": self.finish_reason, "usage": usage, **calls}
        if self.top_logprobs is not None:
            result["logprobs"] = self.logprobs
        self.sink.finish(result)
