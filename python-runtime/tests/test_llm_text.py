"""The LLM engine's text handling, without a model: stop strings, tool-call
parsing, generate_config checks, chat message normalization."""

import json

import pytest

from hangar_runtime.engines.transformers_llm.chat_format import normalize_messages
from hangar_runtime.engines.transformers_llm.generate_config import parse_generate_config
from hangar_runtime.engines.transformers_llm.reasoning import ReasoningSplitter
from hangar_runtime.engines.transformers_llm.stopping import StopScanner
from hangar_runtime.engines.transformers_llm.tool_calls import (
    ToolCallText, parse_hermes, parse_json_calls, tool_call_format)
from hangar_runtime.errors import error_param


def feed_all(scanner, pieces):
    out = [scanner.feed(p) for p in pieces]
    return out, scanner


# ---- stop strings ----

def test_stop_string_inside_one_piece_cuts_before_it():
    out, scanner = feed_all(StopScanner(["STOP"]), ["hello STOP world"])
    assert out == ["hello "] and scanner.stopped


def test_stop_string_split_across_pieces_is_never_handed_out():
    out, scanner = feed_all(StopScanner(["</end>"]), ["a</", "e", "nd", ">tail"])
    assert "".join(out) == "a" and scanner.stopped
    assert out[0] == "a"  # "</" was held back, not sent and then regretted


def test_held_back_text_that_is_no_stop_comes_out_with_the_next_piece():
    out, scanner = feed_all(StopScanner(["STOP"]), ["abc ST", "ART"])
    assert out == ["abc ", "START"] and not scanner.stopped


def test_flush_hands_out_what_was_held_when_generation_ends_otherwise():
    scanner = StopScanner(["STOP"])
    assert scanner.feed("end ST") == "end "
    assert scanner.flush() == "ST"


def test_earliest_of_several_stop_strings_wins():
    out, scanner = feed_all(StopScanner(["world", "lo"]), ["hello world"])
    assert out == ["hel"] and scanner.stopped
    assert scanner.matched == "lo"  # which one ended it: Anthropic's stop_sequence


def test_of_two_stop_strings_at_one_place_the_first_given_is_the_match():
    out, scanner = feed_all(StopScanner(["ab", "abc", "a"]), ["xab", "cd"])
    assert "".join(out) == "x" and scanner.matched == "ab"
    assert StopScanner(["STOP"]).matched is None


def test_nothing_after_a_stop():
    scanner = StopScanner(["x"])
    assert scanner.feed("axb") == "a"
    assert scanner.feed("more") == "" and scanner.flush() == ""


def test_empty_stop_strings_stop_nothing():
    out, scanner = feed_all(StopScanner(["", "Z"]), ["abc"])
    assert out == ["abc"] and not scanner.stopped


# ---- tool calls ----

def test_hermes_blocks_become_openai_tool_calls():
    text = ('Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
            '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>')
    rest, calls = parse_hermes(text)
    assert rest == "Let me check."
    assert [c["function"]["name"] for c in calls] == ["get_weather", "get_time"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": "Paris"}
    assert calls[1]["function"]["arguments"] == "{}"
    assert all(c["type"] == "function" and c["id"].startswith("call_") for c in calls)
    assert calls[0]["id"] != calls[1]["id"]


def test_hermes_block_left_open_at_the_end_still_parses():
    rest, calls = parse_hermes('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n')
    assert rest == "" and calls[0]["function"]["name"] == "f"


def test_hermes_block_with_bad_json_stays_text():
    text = "<tool_call>{not json}</tool_call>"
    assert parse_hermes(text) == (text, [])


def test_llama3_json_with_parameters():
    rest, calls = parse_json_calls(' {"name": "get_time", "parameters": {"timezone": "UTC"}} ')
    assert rest == ""
    assert calls[0]["function"] == {"name": "get_time", "arguments": '{"timezone": "UTC"}'}


def test_mistral_list_with_its_marker():
    rest, calls = parse_json_calls('[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]')
    assert rest == "" and [c["function"]["name"] for c in calls] == ["a", "b"]


def test_json_format_plain_text_or_other_json_is_no_tool_call():
    assert parse_json_calls("The answer is 42.") == ("The answer is 42.", [])
    assert parse_json_calls('{"answer": 42}') == ('{"answer": 42}', [])
    assert parse_json_calls('[{"name": "a"}, {"nom": "b"}]') == ('[{"name": "a"}, {"nom": "b"}]', [])


def test_tool_parser_or_else_family_picks_the_format():
    assert tool_call_format("llama3", None) == "json"
    assert tool_call_format("mistral", "anything") == "mistral"
    assert tool_call_format("qwen", "llama-3.1-instruct") == "hermes"
    assert tool_call_format(None, "llama-3.1-instruct") == tool_call_format(None, "Llama-3.3-instruct") == "json"
    assert tool_call_format(None, "qwen2.5-instruct") == tool_call_format("unknown", None) == "hermes"


def test_stream_holds_back_a_hermes_call_and_releases_text_before_it():
    tools = ToolCallText("hermes")
    pieces = ["Sure", "! <tool", "_call>{\"name\": \"f\", ", "\"arguments\": {}}</tool_call>"]
    assert "".join(tools.feed(p) for p in pieces) == "Sure! "
    rest, calls = tools.finish()
    assert rest == "" and calls[0]["function"]["name"] == "f"


def test_stream_releases_held_text_that_was_no_tool_call():
    tools = ToolCallText("hermes")
    assert tools.feed("a <tool") == "a "
    assert tools.feed("box>") == "<toolbox>"
    assert tools.finish() == ("", [])


def test_stream_json_format_holds_json_and_passes_prose():
    json_reply = ToolCallText("json")
    assert json_reply.feed("  {\"name\": \"f\",") == ""
    assert json_reply.feed(" \"parameters\": {}}") == ""
    rest, calls = json_reply.finish()
    assert rest == "" and calls[0]["function"]["name"] == "f"
    prose = ToolCallText("json")
    assert prose.feed(" Hi") == " Hi" and prose.feed(" {x}") == " {x}"
    assert prose.finish() == ("", [])


# ---- reasoning ----

def split_all(splitter, pieces):
    parts = [splitter.feed(p) for p in pieces] + [splitter.finish()]
    return "".join(r for r, _ in parts), "".join(a for _, a in parts)


def test_reasoning_opened_by_the_reply_is_split_off():
    pieces = ["<th", "ink>\nLet me", " think.\n</th", "ink>\n\nThe answer", " is 4."]
    assert split_all(ReasoningSplitter("<think>", "</think>", False), pieces) == (
        "Let me think.\n", "The answer is 4.")


def test_reasoning_opened_by_the_prompt():
    pieces = ["Hmm", ", two", " and two.</think>", "Four."]
    assert split_all(ReasoningSplitter("<think>", "</think>", True), pieces) == ("Hmm, two and two.", "Four.")


def test_reply_without_reasoning_is_all_answer():
    assert split_all(ReasoningSplitter("<think>", "</think>", False), ["  <b>Hi</b>"]) == ("", "  <b>Hi</b>")


def test_reasoning_cut_off_by_the_token_limit_stays_reasoning():
    assert split_all(ReasoningSplitter("<think>", "</think>", True), ["still going </th"]) == ("still going </th", "")


# ---- generate_config ----

def test_generate_config_defaults_and_nulls():
    config = parse_generate_config({"temperature": None, "unknown_key": 1})
    assert (config.max_tokens, config.temperature, config.top_p, config.top_k) == (None, 1.0, 1.0, 0)
    assert parse_generate_config(None) == parse_generate_config({})


def test_generate_config_stop_as_string_or_list():
    assert parse_generate_config({"stop": "x"}).stop == ["x"]
    assert parse_generate_config({"stop": ["a", "b"], "stop_token_ids": [3.0]}).stop_token_ids == [3]


@pytest.mark.parametrize("raw", [
    {"max_tokens": 0}, {"max_tokens": 2.5}, {"max_tokens": "10"}, {"temperature": -1}, {"top_p": 0},
    {"top_p": 1.5}, {"top_k": -2}, {"repetition_penalty": 0}, {"stop": [1]}, {"stop_token_ids": "1"},
    {"echo": "yes"}, {"seed": True}, {"temperature": float("nan")}, [1],
])
def test_generate_config_rejects_bad_values(raw):
    with pytest.raises((ValueError, TypeError)):
        parse_generate_config(raw)


# ---- chat messages ----

def test_text_parts_are_joined_and_tool_call_arguments_decoded():
    messages = normalize_messages([
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]},
    ])
    assert messages[0]["content"] == "ab"
    assert messages[1]["content"] == ""
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == {"x": 1}


@pytest.mark.parametrize("messages", [
    [], "hi", [{"content": "no role"}], [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
    [{"role": "user", "content": 5}],
])
def test_bad_messages_are_invalid(messages):
    with pytest.raises(ValueError):
        normalize_messages(messages)


def test_a_text_part_without_text_is_named_as_such():
    with pytest.raises(ValueError, match=r"messages\[0\]\.content\[1\]\.text must be a string") as caught:
        normalize_messages([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text"}]}])
    assert error_param(caught.value) == "messages.0.content.1.text"
