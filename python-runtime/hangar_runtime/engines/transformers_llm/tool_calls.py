"""Tool calls in a model's text, turned into OpenAI `tool_calls`.

The formats, picked by the registration's `tool_parser` or else the model family:
- "hermes" (Qwen, Hermes and most open templates):
  `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks, anywhere in
  the text, any number of them;
- "json" (Llama 3.x): the whole reply is JSON objects `{"name": ..., "parameters": {...}}`
  (a list, or several separated by `;`), perhaps after `<|python_tag|>`;
- "mistral": `[TOOL_CALLS]` and what follows, in either of Mistral's forms;
- "deepseek": DeepSeek V3/R1/V3.1's `<｜tool▁call▁begin｜>` blocks (tool_call_markup.py).
The special tokens of the markup are kept by the detokenizer (PRESERVED_TOKENS).

A stream must not show the markup as text and then again as tool_calls, so from
where a tool call may begin the text is held back; at the end it becomes
tool_calls, or, if it does not parse, plain text after all."""

import json
import re

from ...errors import field_error
from .holdback import split_held
from .tool_call_markup import (DEEPSEEK_CALL, DEEPSEEK_CALLS, MISTRAL_CALLS, call_from_value, json_sequence,
                               parse_deepseek, parse_mistral, tool_call)

_HERMES_OPEN = "<tool_call>"
_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_HERMES_UNCLOSED = re.compile(r"<tool_call>((?:(?!<tool_call>).)*)$", re.DOTALL)


_JSON_PARSERS = ("llama3",)
_HERMES_PARSERS = ("qwen", "hermes")
_DEEPSEEK_PARSERS = ("deepseek-v3", "deepseek_v3", "deepseek-v3.1", "deepseek-r1")
# Llama 3.1's marker before a call (a special token, kept by PRESERVED_TOKENS).
_PYTHON_TAG = "<|python_tag|>"

# The formats whose calls open with a marker: (markers, parser of the held text).
_MARKED = {
    "hermes": ((_HERMES_OPEN,), None),  # parse_hermes, bound below
    "mistral": ((MISTRAL_CALLS,), parse_mistral),
    "deepseek": ((DEEPSEEK_CALLS, DEEPSEEK_CALL), parse_deepseek),
}

# The special tokens each format's markup is made of: decoding drops special tokens, so
# these are kept (src/llama-runtime/engine/tool-calls.ts has the same list).
PRESERVED_TOKENS = {
    "hermes": (),
    "json": (_PYTHON_TAG,),
    "mistral": ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]"),
    "deepseek": ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
                 "<｜tool▁sep｜>"),
    # gpt-oss: a reply is harmony messages, read by harmony.py rather than ToolCallText.
    "harmony": ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|constrain|>"),
}


def tool_call_format(tool_parser, model_family) -> str:
    """"json" or "hermes". Without a known tool_parser: Llama 3.x families call
    tools in bare JSON, every other family gets the Hermes blocks that most open
    chat templates with tool support have adopted."""
    if tool_parser in _JSON_PARSERS:
        return "json"
    if tool_parser == "mistral":
        return "mistral"
    if tool_parser == "gpt-oss":
        return "harmony"
    if tool_parser in _DEEPSEEK_PARSERS:
        return "deepseek"
    if tool_parser in _HERMES_PARSERS:
        return "hermes"
    if isinstance(model_family, str) and "llama-3" in model_family.lower():
        return "json"
    return "hermes"


def parse_hermes(text: str) -> tuple[str, list[dict]]:
    """(text with the parsed blocks removed, tool_calls). A block whose JSON does
    not parse stays in the text."""
    calls: list[dict] = []

    def take(match: re.Match) -> str:
        call = _call_from_json(match.group(1))
        if call is None:
            return match.group(0)
        calls.append(call)
        return ""

    rest = _HERMES_BLOCK.sub(take, text)
    # A model stopped by its end token right after the JSON may never close the block.
    rest = _HERMES_UNCLOSED.sub(take, rest)
    return (rest.strip() if calls else rest), calls


def parse_json_calls(text: str) -> tuple[str, list[dict]]:
    body = text.strip()
    for marker in (MISTRAL_CALLS, _PYTHON_TAG):
        if body.startswith(marker):
            body = body[len(marker):].lstrip()
    if not body.startswith(("{", "[")):
        return text, []
    values = json_sequence(body)
    if values is None:
        return text, []
    items = [item for value in values for item in (value if isinstance(value, list) else [value])]
    calls = [call_from_value(item) for item in items]
    if not calls or any(c is None for c in calls):
        return text, []
    return "", calls


class ToolCallText:
    """Passes text through until a tool call may have begun, then holds the rest
    until finish() says what it was."""

    def __init__(self, tool_format: str):
        self._json = tool_format == "json"
        opens, parse = _MARKED.get(tool_format, _MARKED["hermes"])
        self._opens, self._parse = opens, parse or parse_hermes
        self._held = ""
        self._holding = False
        self._seen_text = False  # json: a reply that does not open with JSON is plain text

    def feed(self, text: str) -> str:
        if self._holding:
            self._held += text
            return ""
        text = self._held + text
        self._held = ""
        return self._feed_json(text) if self._json else self._feed_marked(text)

    def finish(self) -> tuple[str, list[dict]]:
        """(text still to hand out, tool_calls)."""
        held, self._held = self._held, ""
        if not self._holding:
            return held, []
        rest, calls = parse_json_calls(held) if self._json else self._parse(held)
        return rest, calls

    def _feed_marked(self, text: str) -> str:
        found = [i for i in (text.find(o) for o in self._opens) if i >= 0]
        if found:
            start = min(found)
            self._holding = True
            self._held = text[start:]
            return text[:start]
        safe, self._held = split_held(text, list(self._opens))
        return safe

    def _feed_json(self, text: str) -> str:
        if self._seen_text:
            return text
        stripped = text.lstrip()
        if not stripped:
            self._held = text  # only whitespace so far: the JSON may still come
            return ""
        if stripped.startswith(("{", "[", _PYTHON_TAG)):
            self._holding = True
            self._held = text
            return ""
        if _PYTHON_TAG.startswith(stripped):
            self._held = text  # the marker may be arriving in pieces
            return ""
        self._seen_text = True
        return text


def _call_from_json(raw: str) -> dict | None:
    try:
        return call_from_value(json.loads(raw.strip()))
    except ValueError:
        return None


def forced_function(tools, choice) -> tuple[list[dict], dict | None]:
    """For a forcing tool_choice ("required" or a named function): the tools'
    functions, and the named one (None for "required"). Refuses, naming tool_choice, a
    choice of another shape, a name that is not one of the tools, or no tools at all."""
    functions = [t["function"] for t in tools or [] if isinstance(t, dict) and isinstance(t.get("function"), dict)]
    if not functions:
        raise field_error("tool_choice", f"tool_choice {choice!r} needs tools to choose from")
    if choice == "required":
        return functions, None
    if not isinstance(choice, dict):
        raise field_error("tool_choice", f"tool_choice must be \"none\", \"auto\", \"required\" or a function, got {choice!r}")
    name = (choice.get("function") or {}).get("name")
    named = next((f for f in functions if f.get("name") == name), None)
    if named is None:
        raise field_error("tool_choice", f"tool_choice names the function {name!r}, which is not one of the tools")
    return functions, named
