"""Each tool-call format on model outputs recorded by others (test/fixtures/tool-call-outputs.json:
vLLM's, SGLang's, llama.cpp's and the model vendors' parser tests and docs, each case with
its source), through the Transformers engine's reasoning split and tool-call filter,
whole and streamed in small pieces; test/llama-runtime/tool-call-outputs.test.ts runs
the same cases through the llama.cpp runtime's. Also: the detokenizer keeps a format's
special tokens as text, and drops every other special token."""

import json
import re
from pathlib import Path

import pytest
from conftest import tiny_models_module

from hangar_runtime.engines.transformers_llm.detokenizer import Detokenizer
from hangar_runtime.engines.transformers_llm.harmony import HarmonyText
from hangar_runtime.engines.transformers_llm.reasoning import ReasoningSplitter
from hangar_runtime.engines.transformers_llm.tool_calls import ToolCallText, tool_call_format

CASES = json.loads((Path(__file__).resolve().parents[2] / "test" / "fixtures" / "tool-call-outputs.json").read_text())

# Each recorded format as the engines know it: the tool format and the family's reasoning tags.
FORMATS = {
    "hermes": ("hermes", ("<think>", "</think>")),
    "llama3": ("json", None),
    "mistral": ("mistral", None),
    "mistral-args": ("mistral", ("[THINK]", "[/THINK]")),
    "deepseek-v3": ("deepseek", ("<think>", "</think>")),
    "deepseek-v31": ("deepseek", ("<think>", "</think>")),
    "harmony": ("harmony", None),
}
# What the engines do not read, and why (the TypeScript test lists the same):
# Hermes 2 Pro's Python-quoted arguments are not JSON; Llama's built-in tool call is not a function call;
# vLLM's Llama 3 parser takes a JSON call from the middle of prose, where here such a reply is text;
# gpt-oss decoded without its special tokens (as Xinference does) cannot be read, and the engines keep them.
UNREAD_VARIANTS = {"python-literal-args", "python_tag+eom", "special-tokens-stripped"}
END_TOKENS = re.compile(r"(<\|im_end\|>|<\|eot_id\|>|<\|eom_id\|>|<\|return\|>|<\|call\|>)\s*$")


def _readable(case) -> bool:
    return (case["format"] in FORMATS and case.get("variant") not in UNREAD_VARIANTS
            and not (case["format"] == "llama3" and case["text"].startswith("Here is the result: {")))


READABLE = [c for c in CASES if _readable(c)]


def _pieces(text: str, pieces: list[int]):
    """`text` cut into pieces of the given lengths, in turn: how a stream hands it over."""
    at, i = 0, 0
    while at < len(text):
        piece = text[at:at + pieces[i % len(pieces)]]
        at, i = at + len(piece), i + 1
        yield piece


def _run(text: str, tool_format: str, tags, pieces: list[int]) -> dict:
    if tool_format == "harmony":
        return _run_harmony(text, pieces)
    starts_inside = tags is not None and tags[0] not in text and tags[1] in text
    reasoning = ReasoningSplitter(*tags, starts_inside=starts_inside) if tags else None
    tools = ToolCallText(tool_format)
    thought = answer = ""
    for piece in _pieces(text, pieces):
        t, a = reasoning.feed(piece) if reasoning else ("", piece)
        thought += t
        answer += tools.feed(a)
    if reasoning:
        t, a = reasoning.finish()
        thought += t
        answer += tools.feed(a)
    rest, calls = tools.finish()
    answer += rest
    return _outcome(answer, thought, calls)


def _run_harmony(text: str, pieces: list[int]) -> dict:
    harmony = HarmonyText()
    thought = answer = ""
    for piece in _pieces(text, pieces):
        t, a = harmony.feed(piece)
        thought, answer = thought + t, answer + a
    t, a, calls = harmony.finish()
    return _outcome(answer + a, thought + t, calls)


def _outcome(answer: str, thought: str, calls: list[dict]) -> dict:
    def or_none(s):
        return s.strip() or None

    return {"content": or_none(answer), "reasoning_content": or_none(thought),
            "tool_calls": [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"]),
                            **({} if c["id"].startswith("call_") else {"id": c["id"]})} for c in calls]}


def test_every_parsed_format_has_recorded_cases():
    for name in FORMATS:
        assert sum(c["format"] == name for c in READABLE) >= 3, name


@pytest.mark.parametrize("case", READABLE, ids=[f"{c['format']}-{i}" for i, c in enumerate(READABLE)])
def test_recorded_output(case):
    text = END_TOKENS.sub("", case["text"])
    tool_format, tags = FORMATS[case["format"]]
    expected = dict(case["expected"])
    expected["content"] = (expected["content"] or "").strip() or None
    expected["reasoning_content"] = (expected["reasoning_content"] or "").strip() or None
    assert _run(text, tool_format, tags, [len(text)]) == expected
    assert _run(text, tool_format, tags, [1, 3, 7, 2, 5]) == expected


def test_tool_parsers_pick_their_formats():
    assert tool_call_format("mistral", None) == "mistral"
    assert tool_call_format("deepseek-v3.1", None) == "deepseek"
    assert tool_call_format("deepseek-r1", None) == "deepseek"
    assert tool_call_format("llama3", None) == "json"
    assert tool_call_format("gpt-oss", None) == "harmony"
    assert tool_call_format("deepseek-v3.2", None) == "hermes"  # its DSML markup is not read


def test_detokenizer_keeps_only_the_special_tokens_asked():
    tokenizer = tiny_models_module().build_tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": ["[TOOL_CALLS]", "[ARGS]"]})
    calls, args = tokenizer.convert_tokens_to_ids(["[TOOL_CALLS]", "[ARGS]"])
    ids = tokenizer.encode("hello", add_special_tokens=False)
    eos = tokenizer.eos_token_id
    stream = [calls, *ids, args, *ids, eos]

    def decode(keep):
        detok = Detokenizer(tokenizer, [], keep)
        return "".join(detok.add(i) for i in stream) + detok.flush()

    dropped = decode(frozenset())
    assert "[TOOL_CALLS]" not in dropped and "[ARGS]" not in dropped and "hello" in dropped
    kept = decode(frozenset({calls, args}))
    assert kept.startswith("[TOOL_CALLS]") and "[ARGS]" in kept
    assert tokenizer.eos_token not in kept
