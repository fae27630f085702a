"""What a download of a hub repository does when the hub fails part way: a busy or
failing hub (429, 500, 502, 503, 504) and a connection that drops, stalls or is
refused are asked again, three times, after the hub's `Retry-After` (up to 30 s) or
1, 2 and 4 s, as the GGUF downloader does (src/llama-runtime/engine/model-file.ts);
each try resumes from the partial files the last one left. Still failing, the launch
fails with SourceUnreachable (503, "try again later"), not InvalidModel (400, "fix the
request"): nothing in the request was wrong.

huggingface_hub 1.x asks again itself only on 408 and 429 for a file's bytes, and
gives up on a 5xx at once."""

import logging
import time

log = logging.getLogger("hangar_runtime.hub")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
WAITS_S = (1.0, 2.0, 4.0)
MAX_RETRY_AFTER_S = 30.0


def transient(exc: BaseException) -> bool:
    """Whether the hub, not the request, is at fault, and asking again may help: a
    connection refused, dropped or timed out (httpx's, as huggingface_hub raises them,
    or urllib's and http.client's, as modelscope_download.py meets them), or a busy or
    failing hub's status (huggingface_hub's HfHubHTTPError, urllib's HTTPError)."""
    import http.client
    import urllib.error

    import httpx

    if isinstance(exc, urllib.error.HTTPError):
        return exc.code in RETRY_STATUSES
    if isinstance(exc, (httpx.TransportError, ConnectionError, TimeoutError, urllib.error.URLError, http.client.HTTPException)):
        return True
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None) in RETRY_STATUSES


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) if response is not None else getattr(exc, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return min(MAX_RETRY_AFTER_S, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None


def with_retries(download, what: str, sleep=time.sleep):
    """download() again after a transient failure, at most len(WAITS_S) more times; the
    last failure is raised as it came (the caller says which kind it is, transient())."""
    for attempt in range(len(WAITS_S) + 1):
        try:
            return download()
        except Exception as exc:
            if attempt == len(WAITS_S) or not transient(exc):
                raise
            asked = _retry_after(exc)
            wait = asked if asked is not None else WAITS_S[attempt]
            log.warning("downloading %s failed (%s: %s); asking again in %gs", what, type(exc).__name__,
                        str(exc).splitlines()[0] if str(exc) else "", wait)
            sleep(wait)
