"""Server-sent events of a streaming chat or completion (contract §4), as an iterator."""

import json

from .errors import HangarClientError


def iter_sse_chunks(response, action: str):
    """Yields each ``data:`` payload as a dict until ``[DONE]``; ``data: {"error": ...}`` raises.

    Closes the response when the iteration ends, is abandoned or fails, so an unfinished
    stream is cancelled on the server (a disconnect stops the generation there).
    """
    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                return
            chunk = json.loads(data)
            if isinstance(chunk, dict) and "error" in chunk:
                error = chunk["error"]
                message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
                code = error.get("code") if isinstance(error, dict) else None
                raise HangarClientError(action, message, code=code)
            yield chunk
    finally:
        response.close()
