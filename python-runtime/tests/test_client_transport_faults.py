"""The Python client's failures are HangarClientError, whatever breaks: a stream cut
off mid-answer, an event that is not JSON, a stream without its [DONE], an answer that
is an HTML page. A Hangar server produces none of these on demand, so a small HTTP
server on loopback plays the broken peer (a proxy, a dying server); the client code
under test is the real one."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hangar_client import HangarClientError
from hangar_client.transport import Transport

CHUNK = '{"choices": [{"index": 0, "delta": {"content": "hi"}}]}'


class _Broken(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _head(self, content_type, length=None):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def do_GET(self):
        body = b"<html>proxy login</html>"
        self._head("text/html", len(body))
        self.wfile.write(body)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        events = {
            "/ok": f"data: {CHUNK}\n\ndata: [DONE]\n\n",
            # One event's JSON over two data: lines (SSE joins them with a newline).
            "/split": 'data: {"choices": [{"index": 0,\ndata:  "delta": {"content": "hi"}}]}\n\ndata: [DONE]\n\n',
            "/not-json": f"data: {CHUNK}\n\ndata: <html>oops</html>\n\n",
            "/no-done": f"data: {CHUNK}\n\n",
            "/error": 'data: {"error": {"message": "the model was terminated", "code": "model_terminated"}}\n\n',
        }
        if self.path == "/cut":
            # Promises more than it sends, then hangs up: the connection breaks mid-answer.
            body = f"data: {CHUNK}\n\n".encode()
            self._head("text/event-stream", len(body) + 100)
            self.wfile.write(body)
            self.wfile.flush()
            self.connection.shutdown(2)
            return
        body = events[self.path].encode()
        self._head("text/event-stream", len(body))
        self.wfile.write(body)


@pytest.fixture(scope="module")
def transport():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Broken)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    transport = Transport(f"http://127.0.0.1:{server.server_address[1]}", timeout=10)
    yield transport
    transport.close()
    server.shutdown()
    server.server_close()


def _stream(transport, path):
    return list(transport.stream(path, {"model": "m", "stream": True}, "chat"))


def test_a_whole_stream_gives_its_chunks_and_an_event_over_two_data_lines_is_one_chunk(transport):
    assert [c["choices"][0]["delta"]["content"] for c in _stream(transport, "/ok")] == ["hi"]
    assert [c["choices"][0]["delta"]["content"] for c in _stream(transport, "/split")] == ["hi"]


@pytest.mark.parametrize("path, says", [
    ("/cut", "the stream broke off"),
    ("/not-json", "an event that is not JSON: '<html>oops</html>'"),
    ("/no-done", "the stream ended before its [DONE]"),
    ("/error", "the model was terminated"),
])
def test_every_broken_stream_is_a_client_error_after_the_chunks_that_came(transport, path, says):
    seen = []
    with pytest.raises(HangarClientError) as caught:
        for chunk in transport.stream(path, {"model": "m", "stream": True}, "chat"):
            seen.append(chunk)
    assert says in caught.value.message
    assert caught.value.action == "chat"
    assert len(seen) == (0 if path == "/error" else 1)


def test_an_answer_that_is_not_json_is_a_client_error_naming_what_came(transport):
    with pytest.raises(HangarClientError) as caught:
        transport.call("GET", "/v1/models", "list models")
    assert "a body that is not JSON (text/html)" in caught.value.message
    assert "proxy login" in caught.value.message
