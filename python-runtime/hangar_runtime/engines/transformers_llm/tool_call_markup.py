"""The tool-call markup of the families that write calls between special tokens
(docs/registry.md, "Tool parsers"; src/llama-runtime/engine/tool-call-markup.ts is the
same for the llama.cpp runtime), parsed once the reply is whole. Each parser returns
the text outside the calls and the calls; a call that does not parse leaves the text
as it was."""

import json
import re
import secrets

MISTRAL_CALLS = "[TOOL_CALLS]"
_MISTRAL_ARGS = "[ARGS]"
_MISTRAL_CALL_ID = "[CALL_ID]"
DEEPSEEK_CALLS = "<｜tool▁calls▁begin｜>"
DEEPSEEK_CALL = "<｜tool▁call▁begin｜>"
_DEEPSEEK_CALLS_END = "<｜tool▁calls▁end｜>"
_DEEPSEEK_CALL_END = "<｜tool▁call▁end｜>"
_DEEPSEEK_SEP = "<｜tool▁sep｜>"
_CALL_ID = re.compile(r"^[\w-]{1,64}$")


def tool_call(name: str, arguments, call_id: str | None = None) -> dict:
    """One OpenAI tool call; arguments that are not yet a JSON string are encoded."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id or f"call_{secrets.token_hex(12)}", "type": "function",
            "function": {"name": name, "arguments": arguments}}


def call_from_value(value) -> dict | None:
    """`{"name", "arguments"}` (or Llama's `"parameters"`) as a call; None for anything else.
    Mistral Nemo's calls carry their own id, which the answer to the call must name."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    own_id = value.get("id")
    own_id = own_id if isinstance(own_id, str) and _CALL_ID.match(own_id) else None
    return tool_call(value["name"], value.get("arguments", value.get("parameters", {})), own_id)


def json_sequence(body: str) -> list | None:
    """The JSON values in `body` one after another, separated by `;` or whitespace (Llama
    3.x writes several calls as `{...}; {...}`); None when anything else is in between."""
    decoder = json.JSONDecoder()
    values, at = [], 0
    while True:
        while at < len(body) and (body[at].isspace() or body[at] == ";"):
            at += 1
        if at >= len(body):
            return values
        if body[at] not in "{[":
            return None
        try:
            value, at = decoder.raw_decode(body, at)
        except ValueError:
            return None
        values.append(value)


def parse_mistral(text: str) -> tuple[str, list[dict]]:
    """Mistral's `[TOOL_CALLS]`: a JSON list after it (tokenizers before v11), or
    `name[ARGS]{...}` per call (v11 and later; v11 with `[CALL_ID]id` before `[ARGS]`)."""
    start = text.find(MISTRAL_CALLS)
    if start < 0:
        return text, []
    before = text[:start].strip()
    calls: list[dict] = []
    for part in (p.strip() for p in text[start:].split(MISTRAL_CALLS)[1:]):
        if part.startswith(("[", "{")):
            listed = _json_calls(part)
            if listed is None:
                return text, []
            calls.extend(listed)
            continue
        args = part.find(_MISTRAL_ARGS)
        # Where [ARGS] was dropped by a detokenizer that does not keep it: the name runs up to the JSON.
        cut = args if args >= 0 else part.find("{")
        if cut <= 0:
            return text, []
        head = part[:cut]
        name = head.split(_MISTRAL_CALL_ID)[0].strip()
        value = _loads(part[cut + len(_MISTRAL_ARGS) if args >= 0 else cut:].strip())
        if not name or not isinstance(value, dict):
            return text, []
        calls.append(tool_call(name, value))
    return before, calls


def parse_deepseek(text: str) -> tuple[str, list[dict]]:
    """DeepSeek V3/R1's `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>`
    and V3.1's `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`, in
    `<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>` or not. Text before the calls is the
    content; text after them is dropped, as the model's turn ends there."""
    found = [i for i in (text.find(DEEPSEEK_CALLS), text.find(DEEPSEEK_CALL)) if i >= 0]
    if not found:
        return text, []
    start = min(found)
    before = text[:start].strip()
    calls: list[dict] = []
    for block in text[start:].split(DEEPSEEK_CALL)[1:]:
        end = block.find(_DEEPSEEK_CALL_END)
        inner = (block[:end] if end >= 0 else block.split(_DEEPSEEK_CALLS_END)[0]).strip()
        head, sep, rest = inner.partition(_DEEPSEEK_SEP)
        if not sep:
            return text, []
        name = head.strip()
        if name == "function":
            # V3: the name on its own line, then the arguments in a ```json fence.
            name, _, rest = rest.partition("\n")
            name = name.strip()
        body = re.sub(r"\s*```$", "", re.sub(r"^```(?:json)?\s*", "", rest.strip()))
        value = _loads(body)
        if not name or not isinstance(value, dict):
            return text, []
        calls.append(tool_call(name, value))
    return before, calls


def _json_calls(body: str) -> list[dict] | None:
    value = _loads(body)
    if value is None:
        return None
    calls = [call_from_value(item) for item in (value if isinstance(value, list) else [value])]
    return calls if calls and all(c is not None for c in calls) else None


def _loads(body: str):
    try:
        return json.loads(body)
    except ValueError:
        return None
