"""The simulator's forced tool call: with `tool_choice` "required" or a named function,
its answer is one call of that function (the first tool for "required") whose
arguments are built from the tool's JSON schema, deterministically, so a test can
predict them. With "auto" or "none" it answers text, as a model that chose not to
call would. It stands in for an engine's constrained decoding in load tests and API
tests; it is not a model choosing a tool."""

import json

from ..transformers_llm.tool_calls import forced_function, tool_call
from .text import WORDS

_MAX_DEPTH = 6


def forced_tool_call(tools, tool_choice) -> dict | None:
    """The call to answer with, or None when the answer is text."""
    if tool_choice in (None, "auto", "none") or not tools:
        return None
    functions, named = forced_function(tools, tool_choice)
    function = named if named is not None else functions[0]
    parameters = function.get("parameters") or {"type": "object"}
    return tool_call(str(function.get("name", "")), sample_value(parameters, 0, parameters))


def sample_value(schema, depth: int, root=None):
    """A value that fits a (simple) JSON schema: the first enum or const, a word for a
    string, 1 for a number, true, one item for an array, every property of an object;
    a `$ref` into the root's `$defs` (or `definitions`) is followed, as Pydantic's nested
    models and enums have them (it answered null, which the schema does not allow)."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and isinstance(root, dict):
        for prefix, defs in (("#/$defs/", root.get("$defs")), ("#/definitions/", root.get("definitions"))):
            if ref.startswith(prefix) and isinstance(defs, dict):
                return sample_value(defs.get(ref[len(prefix):]), depth + 1, root)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return sample_value(schema[key][0], depth + 1, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and isinstance(schema.get("properties"), dict)):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        return {name: sample_value(sub, depth + 1, root) for name, sub in properties.items()}
    if kind == "array":
        return [sample_value(schema.get("items") or {"type": "string"}, depth + 1, root)]
    if kind == "string":
        return WORDS[depth % len(WORDS)]
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return None


def call_tokens(call: dict) -> int:
    """How many steps the call takes to 'generate': one per word of its JSON, at least one."""
    return max(1, len(json.dumps(call["function"]).split()))
