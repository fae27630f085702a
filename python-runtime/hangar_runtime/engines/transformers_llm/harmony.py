"""gpt-oss's harmony format (docs/registry.md, "Tool parsers";
src/llama-runtime/engine/harmony.ts is the same for the llama.cpp runtime): the reply
is messages, each a header (`<|channel|>analysis`, perhaps `to=functions.NAME` and
`<|constrain|>json`) then `<|message|>` and a body up to `<|end|>`, `<|call|>` or
`<|return|>`; the next opens with `<|start|>assistant`. The `analysis` channel is
reasoning, `final` (and `commentary` without a recipient, the user-visible preamble) is
the answer, a body addressed `to=functions.NAME` is a call's JSON arguments; other
recipients (the built-in `browser.*`, `python`) are not functions and are dropped.
Reasoning and answer stream as they come, calls at the end. A reply that does not open
with a harmony header (its special tokens not kept) is passed on as the answer."""

import json
import re

from .holdback import split_held
from .tool_call_markup import tool_call

_START = "<|start|>"
_MESSAGE = "<|message|>"
_END = "<|end|>"
# End-of-generation tokens: a reply stops at them, so they are rarely in the text.
_CALL = "<|call|>"
_RETURN = "<|return|>"
_ENDS = (_END, _CALL, _RETURN, _START)
_MARKERS = [_START, "<|channel|>", _MESSAGE, _END, _CALL, _RETURN]
_CHANNEL = re.compile(r"<\|channel\|>\s*([A-Za-z_]+)")
_RECIPIENT = re.compile(r"\bto=([^\s<]+)")


class HarmonyText:
    def __init__(self):
        self._state = "header"  # or "body", "plain"
        self._header = ""
        self._held = ""
        self._channel = ""
        self._recipient: str | None = None
        self._args = ""
        self._calls: list[dict] = []

    def feed(self, piece: str) -> tuple[str, str]:
        """(reasoning, answer) that may go out now."""
        text, self._held = self._held + piece, ""
        thought = answer = ""
        while text:
            if self._state == "plain":
                answer += text
                break
            if self._state == "header":
                self._header += text
                text = ""
                at = self._header.find(_MESSAGE)
                if at < 0:
                    opening = self._header.lstrip()
                    # Not harmony at all: the model's text is the answer.
                    if opening and not opening.startswith("<|") and not "<|".startswith(opening):
                        self._state, answer, self._header = "plain", answer + self._header, ""
                    break
                self._open(self._header[:at])
                text, self._header = self._header[at + len(_MESSAGE):], ""
                continue
            ends = sorted((text.find(m), m) for m in _ENDS if text.find(m) >= 0)
            if not ends:
                safe, self._held = split_held(text, _MARKERS)
                thought, answer = self._route(safe, thought, answer)
                break
            at, marker = ends[0]
            thought, answer = self._route(text[:at], thought, answer)
            self._close()
            # `<|start|>` opens the next header itself; the others end the message.
            text = text[at:] if marker == _START else text[at + len(marker):]
            self._state = "header"
        return thought, answer

    def finish(self) -> tuple[str, str, list[dict]]:
        """(reasoning, answer, calls) once the reply is whole."""
        thought = answer = ""
        rest, self._held = self._held, ""
        if self._state == "body":
            thought, answer = self._route(rest, thought, answer)
            self._close()
        elif self._state == "plain":
            answer = rest
        elif self._header and not self._header.lstrip().startswith("<|"):
            answer = self._header
        self._header = ""
        return thought, answer, self._calls

    def _open(self, header: str) -> None:
        channel = _CHANNEL.search(header)
        recipient = _RECIPIENT.search(header)
        self._channel = channel.group(1) if channel else ""
        self._recipient = recipient.group(1) if recipient else None
        self._args = ""
        self._state = "body"

    def _close(self) -> None:
        if self._recipient and self._recipient.startswith("functions."):
            name = self._recipient[len("functions."):]
            body = self._args.strip()
            try:
                args = json.loads(body)
            except ValueError:
                args = body  # not JSON (a truncated reply): the arguments as the model wrote them
            if name:
                self._calls.append(tool_call(name, args))
        self._recipient = None
        self._channel = ""

    def _route(self, text: str, thought: str, answer: str) -> tuple[str, str]:
        if not text:
            return thought, answer
        if self._recipient is not None:
            if self._recipient.startswith("functions."):
                self._args += text
            return thought, answer
        if self._channel == "analysis":
            return thought + text, answer
        return thought, answer + text
