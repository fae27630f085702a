"""Jinja's sandbox, told to refuse the single operations that build a huge value.

template_limits.py stops a render between two Python operations, once it is past its
CPU time or memory. One operation is never interrupted, and several build a value of
any size from a short template: `'a' * 3000000000` took 3.3 GB and 7.8 s before the
limits could see it, and three times that number ends the runtime (or a neighbour) in
the kernel's out-of-memory killer. A list of references costs 8 bytes each to hold,
so the memory limit does not see `[s] * 1000` either, until something turns it into
text in one step. So, before they run:
- the render's output, and every block or macro it captures, may hold at most
  MAX_OUTPUT characters (Jinja's `concat`), counted as the pieces come;
- `*` repeating a string or list, `**` of integers, and `%` with a width;
- whatever turns a value into text at once: an output `{{ value }}` (`finalize`), the
  `join`, `string`, `tojson`, `pprint`, `format` and `escape` filters, `str.join`,
  `str.format`, is refused past MAX_BUILT characters, counted through the value's
  parts (each reference once per time it is referenced, as the text repeats it);
- the padding and replacing methods and filters (`center`, `ljust`, `rjust`, `zfill`,
  `expandtabs`, `replace`, `translate`, `indent`, `wordwrap`) and the fills of
  `batch` and `slice`, past MAX_BUILT or a width past MAX_WIDTH; `sum` of lists
  (quadratic, in C) is refused.
Each is an OverflowError, which render_chat answers as the template's fault (400).

- `~` of a list or map (Jinja's `str_join` and `markup_join`) past MAX_BUILT.
What is left: whatever a future Jinja adds, and Python's own objects met through
attributes the sandbox allows; a render in a child process under RLIMIT_AS would
bound everything, at a process per render.

Jinja's documented hooks do it (`intercepted_binops`, `call_binop`, `call`,
`finalize`, `concat`, the filters), set on ImmutableSandboxedEnvironment, the class
transformers compiles chat templates with, when this module is imported: before any
template is compiled (transformers caches compiled templates, and a compiled template
has its operators built in).
"""

import re

import jinja2.runtime
from jinja2.sandbox import ImmutableSandboxedEnvironment

# The longest text or list one operation may build: 16 Mi items, far past any prompt
# a context window holds, and 64 MiB at most for a string of 4-byte characters.
MAX_BUILT = 16 << 20
# The most text a render (or a block it captures) may make: past a 50 MiB request body,
# so a prompt that is merely too long is refused by the context check, which says so.
MAX_OUTPUT = 64 << 20
# The widest field a format or a pad may ask for.
MAX_WIDTH = 100_000
# The largest integer `*` or `**` may build, in bits (a 300,000-digit number).
MAX_INT_BITS = 1 << 20
# tojson's indent lands on every line of the JSON: templates use 2 or 4.
MAX_JSON_INDENT = 64
# The most parts a size count walks through before it calls the value too big to tell.
_WALK_BUDGET = 1_000_000

# `%%` first: a literal percent sign, whose digits after it are text, not a width.
_PRINTF_FIELD = re.compile(r"%%|%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")
_PAD_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs"}


def _refuse(what: str) -> OverflowError:
    return OverflowError(what)


def text_size(value, limit: int = MAX_BUILT) -> int:
    """About how many characters `value` is as text: a string or bytes its length, a
    list, tuple, set or dict its parts (a part referenced twice counts twice, as its
    text is written twice) plus their separators, anything else 8. Stops counting once
    past `limit`, or after _WALK_BUDGET parts (then it is `limit + 1`)."""
    total, walked, stack = 0, 0, [value]
    while stack:
        part = stack.pop()
        walked += 1
        if walked > _WALK_BUDGET:
            return limit + 1
        if isinstance(part, (str, bytes)):
            total += len(part)
        elif isinstance(part, (list, tuple, set, frozenset)):
            total += 2 + 2 * len(part)
            stack.extend(part)
        elif isinstance(part, dict):
            total += 2 + 4 * len(part)
            stack.extend(part.keys())
            stack.extend(part.values())
        else:
            total += 8
        if total > limit:
            return total
    return total


def _check_built(size: int, what: str) -> None:
    if size > MAX_BUILT:
        raise _refuse(f"{what} would build {size} characters or items; a template may build at most {MAX_BUILT} in one operation")


def _check_text(value, what: str) -> None:
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        _check_built(text_size(value), what)


def _check_width(width, what: str) -> None:
    if isinstance(width, int) and not isinstance(width, bool) and width > MAX_WIDTH:
        raise _refuse(f"{what} asks for a width of {width}; at most {MAX_WIDTH}")


def _check_digits(text, what: str) -> None:
    # A width given as text ('{:{}}'.format(x, '>999999999')) is digits in it.
    if isinstance(text, str):
        for number in _DIGITS.findall(text):
            _check_width(int(number), what)


def _check_printf(text: str, args) -> None:
    values = args if isinstance(args, tuple) else (args,)
    for match in _PRINTF_FIELD.finditer(text):
        for number in match.groups():
            if number == "*":
                for value in values:
                    _check_width(value, "a '%' format")
            elif number is not None:
                _check_width(int(number), "a '%' format")
    _check_text(args, "a '%' format")


def _check_str_format(text: str, args, kwargs) -> None:
    # Widths and precisions sit after ':' in a field; a nested '{}' takes one from the arguments.
    for field in re.findall(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}", text):
        spec = field.partition(":")[2]
        for number in _DIGITS.findall(spec):
            _check_width(int(number), "a format field")
        if "{" in spec:
            nested = re.findall(r"\{([^{}]*)\}", spec)
            if any(("." in name or "[" in name) for name in nested):
                raise _refuse("a format field takes its width from an attribute or an item; give it as a number")
            for value in (*args, *kwargs.values()):
                _check_width(value, "a format field")
                _check_digits(value, "a format field")
    for value in (*args, *kwargs.values()):
        _check_text(value, "a format")


def _check_repeat(left, right) -> None:
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int) and count > 0:
            one = text_size(seq, MAX_BUILT // count + 1) if isinstance(seq, (list, tuple)) else len(seq)
            _check_built(max(one, len(seq)) * count, "'*'")
    if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
        raise _refuse(f"'*' would build an integer of more than {MAX_INT_BITS} bits")


def _check_power(base, exponent) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0:
        if base.bit_length() * exponent > MAX_INT_BITS:
            raise _refuse(f"'**' would build an integer of more than {MAX_INT_BITS} bits")


def _replaced_size(text, old, new, count=-1) -> int:
    hits = len(text) + 1 if len(old) == 0 else text.count(old)
    if count is not None and count >= 0:
        hits = min(hits, count)
    return len(text) + hits * (len(new) - len(old))


def _check_replace(text, old, new, count=-1) -> None:
    kinds = (str, bytes)
    if isinstance(text, kinds) and isinstance(old, kinds) and isinstance(new, kinds) and type(old) is type(text) and type(new) is type(text):
        _check_built(_replaced_size(text, old, new, -1 if not isinstance(count, int) else count), "replace")


def _check_join(separator, items) -> None:
    parts = list(items) if isinstance(items, (list, tuple, set, frozenset)) else None
    if parts is not None:
        sep = len(separator) if isinstance(separator, (str, bytes)) else 8
        _check_built(text_size(parts) + sep * len(parts), "join")


def _bounded_binop(self, context, operator, left, right):
    if operator == "*":
        _check_repeat(left, right)
    elif operator == "**":
        _check_power(left, right)
    elif operator == "%" and isinstance(left, str):
        _check_printf(left, right)
    return self.binop_table[operator](left, right)


_sandbox_call = ImmutableSandboxedEnvironment.call


def _arg(args, kwargs, index, name, default=None):
    return args[index] if len(args) > index else kwargs.get(name, default)


def _bounded_call(__self, __context, __obj, *args, **kwargs):  # noqa: N807 - Jinja's signature
    # The sandbox hands `str.format` over wrapped; the wrapper keeps the bound method.
    method = getattr(__obj, "__wrapped__", __obj)
    owner = getattr(method, "__self__", None)
    if isinstance(owner, (str, bytes)):
        name = getattr(method, "__name__", "")
        if name in _PAD_METHODS:
            for value in (*args, *kwargs.values()):
                _check_width(value, f"'{name}'")
            if name == "expandtabs":
                tab = _arg(args, kwargs, 0, "tabsize", 8)
                if isinstance(tab, int):
                    _check_built(len(owner) + owner.count("\t" if isinstance(owner, str) else b"\t") * max(tab, 0), "expandtabs")
        elif name == "replace":
            _check_replace(owner, _arg(args, kwargs, 0, "old"), _arg(args, kwargs, 1, "new"), _arg(args, kwargs, 2, "count", -1))
        elif name == "translate":
            table = _arg(args, kwargs, 0, "table")
            if isinstance(table, dict):
                longest = max((len(v) for v in table.values() if isinstance(v, (str, bytes))), default=1)
                _check_built(len(owner) * max(longest, 1), "translate")
        elif name == "join":
            _check_join(owner, _arg(args, kwargs, 0, "iterable"))
        elif name in ("format", "format_map"):
            _check_str_format(owner, args, kwargs if name == "format" else (args[0] if args and isinstance(args[0], dict) else {}))
    return _sandbox_call(__self, __context, __obj, *args, **kwargs)


def _joining(original):
    # `a ~ b` compiles to str_join((a, b)) (markup_join with autoescape): str() of each.
    def join(seq):
        parts = tuple(seq)
        for part in parts:
            _check_text(part, "'~'")
        return original(parts)
    join._hangar_guarded = True
    return join


def _bounded_finalize(value):
    # Every `{{ value }}` is turned into text right after this, in one step.
    _check_text(value, "the output of an expression")
    return value


def _bounded_concat(pieces):
    """Jinja's `concat` ("".join) for a render, a captured block or a macro: the pieces
    are counted as they come, so a loop that writes a long text many times stops here."""
    kept, total = [], 0
    for piece in pieces:
        total += len(piece)
        if total > MAX_OUTPUT:
            raise _refuse(f"the template's output passed {MAX_OUTPUT} characters")
        kept.append(piece)
    return "".join(kept)


# Filters: each guard sees the filter's own arguments (after the context Jinja passes
# first to some), checks them, and calls the filter; a guard that returns a value
# (join, an iterator made a list to be counted) has it passed on in place of the first.
def _center(value, width=80, *rest, **kwargs):
    _check_width(width, "the center filter")


def _indent(s, width=4, *rest, **kwargs):
    width = kwargs.get("width", width)
    lines = str(s).count("\n") + 1 if isinstance(s, str) else 1
    if isinstance(width, str):
        _check_built(len(s if isinstance(s, str) else "") + len(width) * lines, "the indent filter")
    else:
        _check_width(width, "the indent filter")
        if isinstance(width, int):
            _check_built(len(s if isinstance(s, str) else "") + width * lines, "the indent filter")


def _tojson(value, *rest, **kwargs):
    # transformers' tojson(x, ensure_ascii, indent, separators, ...) and Jinja's (value, indent).
    indent = kwargs.get("indent", rest[1] if len(rest) > 1 else (rest[0] if len(rest) == 1 and not isinstance(rest[0], bool) else None))
    width = len(indent) if isinstance(indent, str) else indent
    if isinstance(width, int) and not isinstance(width, bool) and width > MAX_JSON_INDENT:
        raise _refuse(f"tojson's indent of {width} is more than {MAX_JSON_INDENT}: every line of the JSON carries it")
    separators = kwargs.get("separators", rest[2] if len(rest) > 2 else None)
    if isinstance(separators, (list, tuple)) and any(isinstance(s, str) and len(s) > MAX_JSON_INDENT for s in separators):
        raise _refuse(f"tojson's separators are longer than {MAX_JSON_INDENT}")
    _check_text(value, "tojson")


def _format(value, *args, **kwargs):
    if isinstance(value, str):
        _check_printf(value, tuple(kwargs.values()) or args)


def _replace(s, old=None, new=None, count=None, **kwargs):
    old, new, count = kwargs.get("old", old), kwargs.get("new", new), kwargs.get("count", count)
    _check_replace(str(s), str(old), str(new), -1 if count is None else count)


def _wordwrap(s, width=79, break_long_words=True, wrapstring=None, *rest, **kwargs):
    width, wrapstring = kwargs.get("width", width), kwargs.get("wrapstring", wrapstring)
    if isinstance(s, str) and isinstance(wrapstring, str) and isinstance(width, int):
        _check_built(len(s) + (len(s) // max(width, 1) + 1) * len(wrapstring), "the wordwrap filter")


def _fill(name):
    def check(value, count=None, fill_with=None, *rest, **kwargs):
        count = kwargs.get("linecount" if name == "batch" else "slices", count)
        fill_with = kwargs.get("fill_with", fill_with)
        _check_width(count, f"the {name} filter")
        if fill_with is not None and isinstance(count, int):
            _check_built(count * max(text_size(fill_with), 1), f"the {name} filter's fill")
    return check


def _join(value, d="", *rest, **kwargs):
    # An iterator (`map(...)|join`) is counted as the list it is made into first.
    if hasattr(value, "__next__"):
        value = list(value)
        _check_join(kwargs.get("d", d), value)
        return value
    _check_join(kwargs.get("d", d), value)
    return None


def _sum(iterable, attribute=None, start=0, *rest, **kwargs):
    start = kwargs.get("start", start)
    if not isinstance(start, (int, float)) or isinstance(start, bool):
        raise _refuse("sum adds numbers only: summing lists or text is quadratic work in one step")


def _to_text(name):
    def check(value, *rest, **kwargs):
        _check_text(value, f"the {name} filter")
    return check


_FILTER_CHECKS = {
    "center": _center,
    "indent": _indent,
    "tojson": _tojson,
    "format": _format,
    "replace": _replace,
    "wordwrap": _wordwrap,
    "batch": _fill("batch"),
    "slice": _fill("slice"),
    "join": _join,
    "sum": _sum,
    **{name: _to_text(name) for name in ("string", "pprint", "e", "escape", "forceescape", "safe", "urlencode")},
}


def _guarded_filter(name, original):
    check = _FILTER_CHECKS[name]
    # Jinja passes its context, eval context or environment first to some filters.
    skip = 1 if getattr(original, "jinja_pass_arg", None) is not None else 0

    def guarded(*args, **kwargs):
        if len(args) > skip:
            replaced = check(*args[skip:], **kwargs)
            if replaced is not None:
                args = (*args[:skip], replaced, *args[skip + 1:])
        return original(*args, **kwargs)

    guarded._hangar_guarded = True
    pass_arg = getattr(original, "jinja_pass_arg", None)
    if pass_arg is not None:
        guarded.jinja_pass_arg = pass_arg
    return guarded


class _GuardedFilters(dict):
    """An environment's filters, the size-choosing ones wrapped, also when replaced
    later (transformers puts its own `tojson` in after the environment is made)."""

    def __init__(self, filters):
        super().__init__()
        for name, function in filters.items():
            self[name] = function

    def __setitem__(self, name, function):
        if name in _FILTER_CHECKS and not getattr(function, "_hangar_guarded", False):
            function = _guarded_filter(name, function)
        super().__setitem__(name, function)


_sandbox_init = ImmutableSandboxedEnvironment.__init__


def _bounded_init(self, *args, **kwargs):
    _sandbox_init(self, *args, **kwargs)
    self.filters = _GuardedFilters(self.filters)
    if self.finalize is None:
        self.finalize = _bounded_finalize
    self.concat = _bounded_concat


def install() -> None:
    """Idempotent: the hooks on ImmutableSandboxedEnvironment, for templates compiled from now on."""
    if getattr(ImmutableSandboxedEnvironment, "_hangar_bounded", False):
        return
    ImmutableSandboxedEnvironment.intercepted_binops = frozenset({"*", "**", "%"})
    ImmutableSandboxedEnvironment.call_binop = _bounded_binop
    ImmutableSandboxedEnvironment.call = _bounded_call
    ImmutableSandboxedEnvironment.__init__ = _bounded_init
    # Compiled templates import these from jinja2.runtime when they are made.
    jinja2.runtime.str_join = _joining(jinja2.runtime.str_join)
    jinja2.runtime.markup_join = _joining(jinja2.runtime.markup_join)
    ImmutableSandboxedEnvironment._hangar_bounded = True


install()
