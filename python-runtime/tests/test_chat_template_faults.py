"""A registered chat template that Jinja's sandbox stops is the template's fault (a
400 at the API), whatever the sandbox raises: never a 500 of the engine."""

import pytest
from transformers import AutoTokenizer

from hangar_runtime.engines.transformers_llm.chat_format import check_template, render_chat

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
    # Plain Python failing inside a template: these were 500s of the engine.
    ("{{ 1 / 0 }}", "could not render the messages: ZeroDivisionError"),
    ("{{ 1 // 0 }}{{ 1 % 0 }}", "could not render the messages: ZeroDivisionError"),
    ("{{ '{'.format(1) }}", "could not render the messages: ValueError"),
    # One that does not parse is the template's fault, not the messages'.
    ("{% if %}x{% endif %}", "The chat template is not valid Jinja (line 1)"),
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


# One operation that builds a value of any size from a short template: stopped before
# it runs (template_sandbox.py), since no limit can interrupt it once it has started.
@pytest.mark.parametrize("template", [
    "{{ 'a' * 3000000000 }}",
    "{{ 3000000000 * 'ab' }}",
    "{{ [0] * 100000000 }}",
    "{{ 3 ** 100000000 }}",
    "{{ '%0999999999d' % 1 }}",
    "{{ '%*d' % (999999999, 1) }}",
    "{{ '%(x)999999999s' % {'x': 1} }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{{ '{:>{}}'.format(1, 999999999) }}",
    "{{ 'a'.center(999999999) }}",
    "{{ 'a'.zfill(999999999) }}",
    "{{ ('\t' * 1000).expandtabs(99999) }}",
    "{{ ('ab' * 10000).replace('', 'xyz' * 1000) }}",
    "{{ 'a'|center(999999999) }}",
    "{{ ('x\n' * 1000)|indent(99999) }}",
    "{{ (range(1000)|list)|tojson(indent=100000) }}",
    "{{ '%0999999999d'|format(1) }}",
    "{{ ('ab' * 10000)|replace('', 'xyz' * 1000) }}",
    "{{ [1]|batch(999999999, 0)|list }}",
    # Lists of references to one long text, made text in one step.
    "{% set s = 'a' * 16000000 %}{{ ([s] * 13)|join }}",
    "{% set s = 'a' * 16000000 %}{{ [s, s, s, s, s, s, s, s, s, s, s, s, s] }}",
    "{% set s = 'a' * 16000000 %}{{ [s, s, s, s, s, s, s, s, s, s, s, s, s]|map('string')|join }}",
    "{% set s = 'a' * 16000000 %}{{ [s, s, s, s, s, s, s, s, s, s, s, s, s]|tojson }}",
    "{% set s = 'a' * 16000000 %}{% for i in range(13) %}{{ s }}{% endfor %}",
    "{% set s = 'a' * 16000000 %}{% set t = [s, s, s, s, s, s, s, s, s, s, s, s, s] ~ '' %}{{ t|length }}",
    "{{ ('a' * 13).translate({97: 'b' * 16000000}) }}",
    "{{ 'a'.encode().ljust(200000000) }}",
    "{{ '{:>{}}'.format('a', '200000000') }}",
    "{{ '{1:>{0[0]}}'.format([200000000], 'a') }}",
    "{{ ('a' * 1000)|replace(old='a', new='b' * 200000) }}",
    "{{ {'a': 1}|tojson(separators=('x' * 300000, ':')) }}",
    "{{ ('a' * 20000)|wordwrap(1, true, 'b' * 20000) }}",
    "{{ [[1], [2]]|sum(start=[]) }}",
    "{{ [1]|slice(200000)|list|length }}",
    "{{ [1]|batch(linecount=999999999, fill_with=0)|list|length }}",
])
def test_an_operation_that_would_build_a_huge_value_is_refused_before_it_runs(tokenizer, template):
    import resource
    import time

    start_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.process_time()
    with pytest.raises(ValueError, match=r"could not render the messages: OverflowError: .*(at most|more than|longer than|passed|adds numbers only|give it as a number)"):
        render_chat(tokenizer, MESSAGES, template=template)
    assert time.process_time() - started < 2.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - start_rss < 64 << 20


@pytest.mark.parametrize("template, rendered", [
    ("{{ '-' * 8 }}", "--------"),
    ("{{ 3 * 'ab' }}", "ababab"),
    ("{{ 2 ** 10 }}", "1024"),
    ("{{ '%d/%05.1f' % (1700000000, 2.5) }}", "1700000000/002.5"),
    ("{{ '%d%%1000000' % 5 }}", "5%1000000"),
    ("{{ '{:>4}|{}'.format('x', 1700000000) }}", "   x|1700000000"),
    ("{{ 'ab'.replace('a', 'c') }}|{{ 'x'.center(5) }}|{{ 'x'|center(3) }}", "cb|  x  | x "),
    ("{{ 'a\nb'|indent(2) }}", "a\n  b"),
    ("{{ messages|tojson(indent=2) }}", '[\n  {\n    "role": "user",\n    "content": "hi"\n  }\n]'),
    ("{{ '%s!'|format(messages[0].content) }}|{{ 'aXa'|replace('a', 'b') }}|{{ [1, 2, 3]|batch(2)|list }}", "hi!|bXb|[[1, 2], [3]]"),
    ("{{ [1, 2, 3]|batch(linecount=2)|list }}|{{ [1, 2, 3, 4]|slice(2)|list }}|{{ [1, 2]|sum }}", "[[1, 2], [3]]|[[1, 2], [3, 4]]|3"),
    ("{{ messages|map(attribute='content')|join(', ') }}|{{ ', '.join(['a', 'b']) }}|{{ messages|tojson }}", 'hi|a, b|[{"role": "user", "content": "hi"}]'),
    ("{% set x %}abc{% endset %}{{ x }}|{{ 'x'|e }}|{{ messages[0]|string }}", "abc|x|{'role': 'user', 'content': 'hi'}"),
    ("{{ 'a' ~ 1 ~ [2] ~ messages[0].content }}", "a1[2]hi"),
])
def test_the_same_operations_at_ordinary_sizes_render_as_before(tokenizer, template, rendered):
    assert render_chat(tokenizer, MESSAGES, template=template) == rendered


def test_a_template_that_does_not_parse_is_refused_before_the_model_loads():
    with pytest.raises(ValueError, match=r"chat_template is not valid Jinja \(line 2\)"):
        check_template("ok\n{% for %}")
    check_template("{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% break %}{% endfor %}")
    check_template(None)
