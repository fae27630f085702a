"""Jinja's sandbox, told to refuse the single operations that build a huge value.

template_limits.py stops a render between two Python operations, once it is past its
CPU time or memory. One operation is never interrupted, and several build a value of
any size from a short template: `'a' * 3000000000` took 3.3 GB and 7.8 s before the
limits could see it, and three times that number ends the runtime (or a neighbour) in
the kernel's out-of-memory killer. So the operations whose result size is chosen by a
number are checked before they run:
- `*` repeating a string or list, `**` of integers, `%` formatting with a width;
- the string methods that pad or replace (`center`, `ljust`, `rjust`, `zfill`,
  `expandtabs`, `replace`, `format`);
- the filters that do the same (`center`, `indent`, `tojson` with `indent`, `format`,
  `replace`, `batch`, `slice`).
A value past MAX_BUILT (16 Mi characters or items) or a width past MAX_WIDTH is an
OverflowError, which render_chat answers as the template's fault (400).

Jinja's documented hooks do it (`intercepted_binops`, `call_binop`, `call`), set on
ImmutableSandboxedEnvironment, the class transformers compiles chat templates with,
when this module is imported: before any template is compiled (transformers caches
compiled templates, and a compiled template has its operators built in).
"""

import re

from jinja2.sandbox import ImmutableSandboxedEnvironment

# The longest string or list one operation may build: 16 Mi items, far past any
# prompt a context window holds, and 64 MiB at most for a string of 4-byte characters.
MAX_BUILT = 16 << 20
# The widest field a format or a pad may ask for.
MAX_WIDTH = 100_000
# The largest integer `*` or `**` may build, in bits (a 300,000-digit number).
MAX_INT_BITS = 1 << 20
# tojson's indent lands on every line of the JSON: templates use 2 or 4.
MAX_JSON_INDENT = 64

# `%%` first: a literal percent sign, whose digits after it are text, not a width.
_PRINTF_FIELD = re.compile(r"%%|%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_FORMAT_NUMBER = re.compile(r"\d+")
_PAD_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs"}


def _refuse(what: str) -> OverflowError:
    return OverflowError(what)


def _check_built(size: int, what: str) -> None:
    if size > MAX_BUILT:
        raise _refuse(f"{what} would build {size} items; a template may build at most {MAX_BUILT} in one operation")


def _check_width(width, what: str) -> None:
    if isinstance(width, int) and not isinstance(width, bool) and width > MAX_WIDTH:
        raise _refuse(f"{what} asks for a width of {width}; at most {MAX_WIDTH}")


def _check_printf(text: str, args) -> None:
    values = args if isinstance(args, tuple) else (args,)
    for match in _PRINTF_FIELD.finditer(text):
        for number in match.groups():
            if number == "*":
                for value in values:
                    _check_width(value, "a '%' format")
            elif number is not None:
                _check_width(int(number), "a '%' format")


def _check_str_format(text: str, args, kwargs) -> None:
    # Widths and precisions sit after ':' in a field; a nested '{}' takes one from the arguments.
    for field in re.findall(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}", text):
        spec = field.partition(":")[2]
        for number in _FORMAT_NUMBER.findall(spec):
            _check_width(int(number), "a format field")
        if "{" in spec:
            for value in (*args, *kwargs.values()):
                _check_width(value, "a format field")


def _check_repeat(left, right) -> None:
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int) and count > 0:
            _check_built(len(seq) * count, "'*'")
    if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
        raise _refuse(f"'*' would build an integer of more than {MAX_INT_BITS} bits")


def _check_power(base, exponent) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0:
        if base.bit_length() * exponent > MAX_INT_BITS:
            raise _refuse(f"'**' would build an integer of more than {MAX_INT_BITS} bits")


def _replaced_size(text: str, old: str, new: str, count: int = -1) -> int:
    hits = len(text) + 1 if old == "" else text.count(old)
    if count is not None and count >= 0:
        hits = min(hits, count)
    return len(text) + hits * (len(new) - len(old))


def _check_replace(text, args, kwargs) -> None:
    old = args[0] if len(args) > 0 else kwargs.get("old")
    new = args[1] if len(args) > 1 else kwargs.get("new")
    count = args[2] if len(args) > 2 else kwargs.get("count", -1)
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str) and isinstance(count, int):
        _check_built(_replaced_size(text, old, new, count), "replace")


def _bounded_binop(self, context, operator, left, right):
    if operator == "*":
        _check_repeat(left, right)
    elif operator == "**":
        _check_power(left, right)
    elif operator == "%" and isinstance(left, str):
        _check_printf(left, right)
    return self.binop_table[operator](left, right)


_sandbox_call = ImmutableSandboxedEnvironment.call


def _bounded_call(__self, __context, __obj, *args, **kwargs):  # noqa: N807 - Jinja's signature
    # The sandbox hands `str.format` over wrapped; the wrapper keeps the bound method.
    method = getattr(__obj, "__wrapped__", __obj)
    owner = getattr(method, "__self__", None)
    if isinstance(owner, str):
        name = getattr(method, "__name__", "")
        if name in _PAD_METHODS:
            for value in (*args, *kwargs.values()):
                _check_width(value, f"'{name}'")
            if name == "expandtabs":
                tab = args[0] if args else kwargs.get("tabsize", 8)
                if isinstance(tab, int):
                    _check_built(len(owner) + owner.count("\t") * max(tab, 0), "expandtabs")
        elif name == "replace":
            _check_replace(owner, args, kwargs)
        elif name in ("format", "format_map"):
            _check_str_format(owner, args, kwargs if name == "format" else (args[0] if args and isinstance(args[0], dict) else {}))
    return _sandbox_call(__self, __context, __obj, *args, **kwargs)


def _guard_center(original):
    def center(value, width=80):
        _check_width(width, "the center filter")
        return original(value, width)
    return center


def _guard_indent(original):
    def indent(s, width=4, *args, **kwargs):
        if isinstance(width, str):
            _check_built(len(width) * (str(s).count("\n") + 1), "the indent filter")
        else:
            _check_width(width, "the indent filter")
            if isinstance(width, int):
                _check_built(len(str(s)) + width * (str(s).count("\n") + 1), "the indent filter")
        return original(s, width, *args, **kwargs)
    return indent


def _guard_tojson(original):
    def tojson(value, *args, **kwargs):
        # transformers' tojson(x, ensure_ascii, indent, ...) and Jinja's (eval_ctx, value, indent): the second after the first.
        indent = kwargs.get("indent", args[1] if len(args) > 1 else None)
        width = len(indent) if isinstance(indent, str) else indent
        if isinstance(width, int) and width > MAX_JSON_INDENT:
            raise _refuse(f"tojson's indent of {width} is more than {MAX_JSON_INDENT}: every line of the JSON carries it")
        return original(value, *args, **kwargs)
    return tojson


def _guard_format(original):
    def format(value, *args, **kwargs):  # noqa: A001 - the filter's name
        if isinstance(value, str):
            _check_printf(value, tuple(kwargs.values()) or args)
        return original(value, *args, **kwargs)
    return format


def _guard_replace(original):
    def replace(*args, **kwargs):
        # Jinja's do_replace(eval_ctx, s, old, new, count=None).
        text, rest = args[1], args[2:]
        if len(rest) >= 2:
            count = rest[2] if len(rest) > 2 else kwargs.get("count")
            _check_replace(str(text), (str(rest[0]), str(rest[1])), {"count": -1 if count is None else count})
        return original(*args, **kwargs)
    return replace


def _guard_count_filter(name: str, original):
    def counted(value, count, *args, **kwargs):
        _check_width(count, f"the {name} filter")
        return original(value, count, *args, **kwargs)
    return counted


_FILTER_GUARDS = {
    "center": _guard_center,
    "indent": _guard_indent,
    "tojson": _guard_tojson,
    "format": _guard_format,
    "replace": _guard_replace,
    "batch": lambda f: _guard_count_filter("batch", f),
    "slice": lambda f: _guard_count_filter("slice", f),
}


class _GuardedFilters(dict):
    """An environment's filters, the size-choosing ones wrapped, also when replaced
    later (transformers puts its own `tojson` in after the environment is made)."""

    def __init__(self, filters):
        super().__init__()
        for name, function in filters.items():
            self[name] = function

    def __setitem__(self, name, function):
        guard = _FILTER_GUARDS.get(name)
        if guard is not None and not getattr(function, "_hangar_guarded", False):
            original = function
            function = guard(original)
            function._hangar_guarded = True
            pass_arg = getattr(original, "jinja_pass_arg", None)
            if pass_arg is not None:
                function.jinja_pass_arg = pass_arg
        super().__setitem__(name, function)


_sandbox_init = ImmutableSandboxedEnvironment.__init__


def _bounded_init(self, *args, **kwargs):
    _sandbox_init(self, *args, **kwargs)
    self.filters = _GuardedFilters(self.filters)


def install() -> None:
    """Idempotent: the hooks on ImmutableSandboxedEnvironment, for templates compiled from now on."""
    if getattr(ImmutableSandboxedEnvironment, "_hangar_bounded", False):
        return
    ImmutableSandboxedEnvironment.intercepted_binops = frozenset({"*", "**", "%"})
    ImmutableSandboxedEnvironment.call_binop = _bounded_binop
    ImmutableSandboxedEnvironment.call = _bounded_call
    ImmutableSandboxedEnvironment.__init__ = _bounded_init
    ImmutableSandboxedEnvironment._hangar_bounded = True


install()
