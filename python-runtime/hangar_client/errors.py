"""The one exception the client raises."""


class HangarClientError(RuntimeError):
    """A call the server refused or could not serve.

    A RuntimeError, as Xinference's client raises, so scripts that catch RuntimeError
    keep working; its text is Xinference's too (``Failed to <action>, detail: <message>``).
    ``status`` is the HTTP status (None when the server was not reached or a stream broke
    off), ``message`` the server's own message, ``code`` the stable code of Hangar's
    error catalog (docs/errors.md) when the server gave one.
    """

    def __init__(self, action: str, message: str, status=None, code=None):
        super().__init__(f"Failed to {action}, detail: {message}")
        self.action = action
        self.message = message
        self.status = status
        self.code = code


def error_from_response(action: str, response) -> HangarClientError:
    """Reads the contract's error body: ``detail`` for Xinference clients, ``error`` for OpenAI's."""
    message, code = response.reason_phrase or f"HTTP {response.status_code}", None
    try:
        body = response.json()
    except ValueError:
        body = None
        if response.text:
            message = response.text
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message") or message
        detail = body.get("detail")
        if isinstance(detail, str):
            message = detail
        elif detail is not None:
            message = str(detail)
    return HangarClientError(action, message, status=response.status_code, code=code)
