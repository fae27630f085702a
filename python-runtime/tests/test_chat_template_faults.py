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


def test_a_template_past_its_cpu_time_is_stopped_and_the_next_render_works(tokenizer, monkeypatch):
    from hangar_runtime.engines.transformers_llm import template_limits
    assert template_limits.MAX_CPU_SECONDS == 5.0
    monkeypatch.setattr(template_limits, "MAX_CPU_SECONDS", 0.3)
    nested = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with pytest.raises(ValueError, match="could not render the messages: the template ran for more than 0.3 s of CPU"):
        render_chat(tokenizer, MESSAGES, template=nested)
    assert render_chat(tokenizer, MESSAGES, template="{{ messages[0].content }}") == "hi"


@pytest.mark.parametrize("template", [
    "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
], ids=["a doubling string", "a doubling list"])
def test_a_template_that_grows_past_its_memory_is_stopped_near_the_limit(tokenizer, template):
    import resource
    import signal

    from hangar_runtime.engines.transformers_llm import template_limits
    start = max(template_limits._resident_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    with pytest.raises(ValueError, match="the template took more than 256 MiB of memory"):
        render_chat(tokenizer, MESSAGES, template=template)
    # Stopped right after the copy in flight: a doubling or two past the limit, never
    # the machine's memory (a watchdog thread let it reach 6 GiB).
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - start
    assert grown < 3 * template_limits.MAX_GROWTH_BYTES
    assert render_chat(tokenizer, MESSAGES, template="{{ messages[0].content }}") == "hi"
    # No timer left running between renders, and SIGALRM's handler as it was.
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
