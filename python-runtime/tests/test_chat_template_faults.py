"""A registered chat template that Jinja's sandbox stops is the template's fault (a
400 at the API), whatever the sandbox raises: never a 500 of the engine."""

import pytest
from transformers import AutoTokenizer

from hangar_runtime.engines.transformers_llm.chat_format import render_chat

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def tokenizer(tiny_llm):
    return AutoTokenizer.from_pretrained(tiny_llm["path"])


@pytest.mark.parametrize("template, says", [
    ("{{ raise_exception('no system role') }}", "rejected the messages: no system role"),
    ("{% for i in range(100000000) %}x{% endfor %}", "OverflowError"),
    ("{% include '/etc/passwd' %}", "TypeError"),
    ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "RecursionError"),
    ("{{ messages[0].content + 1 }}", "could not render the messages"),
])
def test_a_template_the_sandbox_stops_is_a_value_error_naming_why(tokenizer, template, says):
    with pytest.raises(ValueError) as caught:
        render_chat(tokenizer, MESSAGES, template=template)
    assert says in str(caught.value)
    assert "root:" not in str(caught.value)
