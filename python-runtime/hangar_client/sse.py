"""Server-sent events of a streaming chat or completion (contract §4), as an iterator."""

import json

import httpx

from .errors import HangarClientError


def iter_sse_chunks(response, action: str):
    """Yields each event's JSON payload as a dict until ``[DONE]``; ``data: {"error": ...}``
    raises, and so does every other failure: a connection lost mid-stream, a payload that
    is not JSON, a stream that ends before ``[DONE]``. All as HangarClientError.

    An event's ``data:`` lines are joined with newlines, as the SSE format says, and an
    event ends at a blank line. Closes the response when the iteration ends, is abandoned
    or fails, so an unfinished stream is cancelled on the server (a disconnect stops the
    generation there).
    """
    try:
        data: list[str] = []
        try:
            for line in response.iter_lines():
                if line == "":
                    if data:
                        payload = "\n".join(data)
                        data = []
                        if payload.strip() == "[DONE]":
                            return
                        yield _chunk(payload, action)
                    continue
                if line.startswith("data:"):
                    value = line[5:]
                    data.append(value[1:] if value.startswith(" ") else value)
            # The last event may end with the stream instead of a blank line.
            if data:
                payload = "\n".join(data)
                if payload.strip() == "[DONE]":
                    return
                yield _chunk(payload, action)
        except httpx.HTTPError as err:
            raise HangarClientError(action, f"the stream broke off: {err}") from err
        raise HangarClientError(action, "the stream ended before its [DONE]: the answer may be cut short")
    finally:
        response.close()


def _chunk(payload: str, action: str) -> dict:
    try:
        chunk = json.loads(payload)
    except ValueError as err:
        raise HangarClientError(action, f"the server sent an event that is not JSON: {payload[:200]!r}") from err
    if isinstance(chunk, dict) and "error" in chunk:
        error = chunk["error"]
        message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
        code = error.get("code") if isinstance(error, dict) else None
        raise HangarClientError(action, message, code=code)
    return chunk
