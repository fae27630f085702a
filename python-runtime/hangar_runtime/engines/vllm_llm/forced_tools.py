"""tool_choice "required" or a named function on vLLM, forced the way vLLM's own OpenAI
server forces it: structured outputs hold the answer to a JSON schema, and the JSON is
the call. A named function: the schema is its parameters, and the answer is its
arguments. "required": an array of at least one {"name", "parameters"} object, one
alternative per tool, and each element is a call."""

import json
import secrets

from ...errors import field_error

_ANY_OBJECT = {"type": "object"}


class ForcedToolCall:
    def __init__(self, tools: list, choice):
        functions = [t.get("function") for t in tools if isinstance(t, dict) and isinstance(t.get("function"), dict)]
        if not functions:
            raise field_error("tool_choice", f"tool_choice {choice!r} needs tools to choose from")
        if choice == "required":
            self.name = None
            alternatives = [{"type": "object",
                             "properties": {"name": {"type": "string", "enum": [f.get("name")]},
                                            "parameters": f.get("parameters") or _ANY_OBJECT},
                             "required": ["name", "parameters"]} for f in functions]
            self.schema = {"type": "array", "minItems": 1,
                           "items": alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}}
        elif isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            function = next((f for f in functions if f.get("name") == name), None)
            if function is None:
                raise field_error("tool_choice", f"tool_choice names the function {name!r}, which is not one of the tools")
            self.name = name
            self.schema = function.get("parameters") or _ANY_OBJECT
        else:
            raise field_error("tool_choice", f"tool_choice must be \"none\", \"auto\", \"required\" or a function, got {choice!r}")

    @property
    def guide(self) -> dict:
        """StructuredOutputsParams' fields."""
        return {"json": self.schema}

    def calls(self, text: str) -> list[dict]:
        """The calls in a finished answer; [] when it is not the JSON asked for (an
        answer cut by max_tokens), which then stays text."""
        try:
            value = json.loads(text)
        except ValueError:
            return []
        if self.name is not None:
            return [_call(self.name, value)] if isinstance(value, dict) else []
        if not isinstance(value, list):
            return []
        return [_call(item["name"], item.get("parameters", {})) for item in value
                if isinstance(item, dict) and isinstance(item.get("name"), str)]


def _call(name: str, arguments) -> dict:
    return {"id": f"call_{secrets.token_hex(12)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}
