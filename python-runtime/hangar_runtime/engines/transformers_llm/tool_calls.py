"""Tool calls in a model's text, turned into OpenAI `tool_calls`.

Two formats, picked by the registration's `tool_parser` or else the model family:
- "hermes" (Qwen, Hermes and most open templates):
  `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks, anywhere in
  the text, any number of them;
- "json" (Llama 3.1, Mistral): the whole reply is one JSON object
  `{"name": ..., "parameters": {...}}` or a list of them (Mistral's opens with
  `[TOOL_CALLS]`, usually a special token that decoding already removed).

A stream must not show the markup as text and then again as tool_calls, so from
where a tool call may begin the text is held back; at the end it becomes
tool_calls, or, if it does not parse, plain text after all."""

import json
import re
import secrets

from ...errors import field_error
from .holdback import split_held

_HERMES_OPEN = "<tool_call>"
_HERMES_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_HERMES_UNCLOSED = re.compile(r"<tool_call>((?:(?!<tool_call>).)*)$", re.DOTALL)


_JSON_PARSERS = ("llama3", "mistral")
_HERMES_PARSERS = ("qwen", "hermes")
_MISTRAL_MARKER = "[TOOL_CALLS]"


def tool_call_format(tool_parser, model_family) -> str:
    """"json" or "hermes". Without a known tool_parser: Llama 3.x families call
    tools in bare JSON, every other family gets the Hermes blocks that most open
    chat templates with tool support have adopted."""
    if tool_parser in _JSON_PARSERS:
        return "json"
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
    if body.startswith(_MISTRAL_MARKER):
        body = body[len(_MISTRAL_MARKER):].lstrip()
    if not body.startswith(("{", "[")):
        return text, []
    try:
        value = json.loads(body)
    except ValueError:
        return text, []
    items = value if isinstance(value, list) else [value]
    calls = [_call_from_value(item) for item in items]
    if not calls or any(c is None for c in calls):
        return text, []
    return "", calls


class ToolCallText:
    """Passes text through until a tool call may have begun, then holds the rest
    until finish() says what it was."""

    def __init__(self, tool_format: str):
        self._json = tool_format == "json"
        self._held = ""
        self._holding = False
        self._seen_text = False  # json: a reply that does not open with JSON is plain text

    def feed(self, text: str) -> str:
        if self._holding:
            self._held += text
            return ""
        text = self._held + text
        self._held = ""
        return self._feed_json(text) if self._json else self._feed_hermes(text)

    def finish(self) -> tuple[str, list[dict]]:
        """(text still to hand out, tool_calls)."""
        held, self._held = self._held, ""
        if not self._holding:
            return held, []
        rest, calls = parse_json_calls(held) if self._json else parse_hermes(held)
        return rest, calls

    def _feed_hermes(self, text: str) -> str:
        start = text.find(_HERMES_OPEN)
        if start >= 0:
            self._holding = True
            self._held = text[start:]
            return text[:start]
        safe, self._held = split_held(text, [_HERMES_OPEN])
        return safe

    def _feed_json(self, text: str) -> str:
        if self._seen_text:
            return text
        stripped = text.lstrip()
        if not stripped:
            self._held = text  # only whitespace so far: the JSON may still come
            return ""
        if stripped.startswith(("{", "[")):
            self._holding = True
            self._held = text
            return ""
        self._seen_text = True
        return text


def _call_from_json(raw: str) -> dict | None:
    try:
        return _call_from_value(json.loads(raw.strip()))
    except ValueError:
        return None


def _call_from_value(value) -> dict | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    return tool_call(value["name"], value.get("arguments", value.get("parameters", {})))


def tool_call(name: str, arguments) -> dict:
    """One OpenAI tool call; arguments that are not yet a JSON string are encoded."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": f"call_{secrets.token_hex(12)}", "type": "function", "function": {"name": name, "arguments": arguments}}


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
