"""How failures are named on the wire: the `kind` and `message` of ERROR and LOAD_FAILED."""

from .plain_values import NotPlainValue


class InvalidModel(Exception):
    """The model itself is bad (missing, corrupt, not loadable by the engine, a user
    launcher raising): LOAD_FAILED with kind "invalid" rather than "internal"."""


class SourceUnreachable(InvalidModel):
    """The model's files are not here and their hub could not be reached now: LOAD_FAILED
    with kind "unavailable", which the control plane answers 503 (try again, or use a
    mirror), not 400 (the model is not at fault). An InvalidModel still for code that
    catches those."""


def field_error(param: str, message: str, cls: type = ValueError) -> Exception:
    """A ValueError (or `cls`) about one request field: its ERROR names it in `param`
    (docs/runtime-protocol.md, "Calls"), dotted as the HTTP request spells it
    (`dimensions`, `logit_bias`, `messages.0.content.1`)."""
    exc = cls(message)
    exc.param = param
    return exc


def error_param(exc: BaseException) -> str | None:
    param = getattr(exc, "param", None)
    return param if isinstance(param, str) and param else None


# The caller's input is at fault for these; the doc maps them to "invalid".
_INVALID_INPUT = (ValueError, TypeError, KeyError)


def call_error_kind(exc: BaseException) -> str:
    # NotPlainValue is a TypeError, but it is the engine's output that is bad, not the input.
    if isinstance(exc, _INVALID_INPUT) and not isinstance(exc, NotPlainValue):
        return "invalid"
    return "internal"


def exception_text(exc: BaseException) -> str:
    # Some exceptions carry no text (e.g. a bare `raise RuntimeError`); the class
    # name is the most useful thing to show then. Never a traceback: those go to stderr.
    return str(exc) or type(exc).__name__
