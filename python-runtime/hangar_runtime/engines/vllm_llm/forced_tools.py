"""tool_choice "required" or a named function on vLLM, forced the way vLLM's own OpenAI
server forces it: structured outputs hold the answer to a JSON schema, and the JSON is
the call. A named function: the schema is its parameters, and the answer is its
arguments. "required": an array of at least one {"name", "parameters"} object, one
alternative per tool, and each element is a call."""

import json

from ..transformers_llm.tool_calls import forced_function, tool_call

_ANY_OBJECT = {"type": "object"}


class ForcedToolCall:
    def __init__(self, tools: list, choice):
        functions, named = forced_function(tools, choice)
        self.name = named.get("name") if named is not None else None
        if named is not None:
            self.schema = named.get("parameters") or _ANY_OBJECT
            return
        alternatives = [{"type": "object",
                         "properties": {"name": {"type": "string", "enum": [f.get("name")]},
                                        "parameters": f.get("parameters") or _ANY_OBJECT},
                         "required": ["name", "parameters"]} for f in functions]
        self.schema = {"type": "array", "minItems": 1,
                       "items": alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}}

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
            return [tool_call(self.name, value)] if isinstance(value, dict) else []
        if not isinstance(value, list):
            return []
        return [tool_call(item["name"], item.get("parameters", {})) for item in value
                if isinstance(item, dict) and isinstance(item.get("name"), str)]
