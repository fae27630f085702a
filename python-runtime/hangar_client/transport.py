"""HTTP to the server: one httpx connection pool shared by a Client and its model handles."""

import httpx

from .errors import HangarClientError, error_from_response
from .sse import iter_sse_chunks


def json_body(response, action: str):
    """The answer's JSON (None for an empty body); a body that is not JSON (a proxy's
    HTML page, say) is a HangarClientError naming what came instead."""
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError as err:
        kind = response.headers.get("content-type", "no content type")
        raise HangarClientError(action, f"the server answered {response.status_code} with a body that is not JSON ({kind}): {response.text[:200]!r}") from err


def _chunks(response, action: str):
    try:
        yield from response.iter_bytes(1024)
    except httpx.HTTPError as err:
        raise HangarClientError(action, f"the stream broke off: {err}") from err
    finally:
        response.close()


class Transport:
    def __init__(self, base_url: str, timeout=None):
        self.base_url = base_url.rstrip("/")
        # No timeout by default, as Xinference's client: a launch waits for the model to load.
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout)
        self.headers = {}

    def set_credential(self, token):
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        else:
            self.headers.pop("Authorization", None)

    def call(self, method: str, path: str, action: str, *, json=None, params=None, ok=(200,)):
        response = self._send(method, path, action, json=json, params=params)
        if response.status_code not in ok:
            raise error_from_response(action, response)
        return json_body(response, action)

    def call_form(self, path: str, action: str, *, data: dict, files: list):
        """A multipart POST (an upload), as Xinference's client sends one; the JSON
        answer, or the text of a text one (a transcript asked for as text, srt or vtt)."""
        # httpx sends a form field per list item; None means the field is not sent.
        fields = {k: v for k, v in data.items() if v is not None}
        response = self._send("POST", path, action, data=fields, files=files)
        if response.status_code != 200:
            raise error_from_response(action, response)
        if response.headers.get("content-type", "").startswith("text/"):
            return response.text
        return json_body(response, action)

    def call_bytes(self, path: str, action: str, *, json, stream: bool = False):
        """A POST whose answer is a file (speech): its bytes, or with ``stream`` an
        iterator of chunks that closes the response when it ends or is abandoned."""
        if not stream:
            response = self._send("POST", path, action, json=json)
            if response.status_code != 200:
                raise error_from_response(action, response)
            return response.content
        return _chunks(self._open_stream(path, json, action), action)

    def raw(self, method: str, path: str, action: str, **kwargs):
        """The response as it is, for callers that read statuses themselves."""
        return self._send(method, path, action, **kwargs)

    def stream(self, path: str, body: dict, action: str):
        return iter_sse_chunks(self._open_stream(path, body, action), action)

    def _open_stream(self, path: str, body: dict, action: str):
        """A POST whose answer is read as it comes; an error answer is raised, read and closed."""
        try:
            request = self.http.build_request("POST", path, json=body, headers=self.headers)
            response = self.http.send(request, stream=True)
        except httpx.TransportError as err:
            raise self._unreachable(action, err) from err
        if response.status_code != 200:
            response.read()
            response.close()
            raise error_from_response(action, response)
        return response

    def close(self):
        self.http.close()

    def _send(self, method, path, action, **kwargs):
        try:
            return self.http.request(method, path, headers=self.headers, **kwargs)
        except httpx.TransportError as err:
            raise self._unreachable(action, err) from err

    def _unreachable(self, action, err):
        return HangarClientError(action, f"cannot reach the server at {self.base_url}: {err}")
