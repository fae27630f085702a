"""A CALL's args and kwargs checked against a method's signature, with errors
that name the method as the caller knows it (`embed`), not the Python function
behind it."""

import inspect


def bind(method: str, fn, args: list, kwargs: dict) -> inspect.BoundArguments:
    """Raises TypeError (ERROR invalid) for missing, extra or unknown arguments."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{method}: {exc}") from None
    bound.apply_defaults()
    return bound
