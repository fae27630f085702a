"""The ModelScope downloader's token goes to the hub alone: urllib copies a request's
ordinary headers onto every redirect, to any host, and ModelScope sends files to its
CDN (found by a probe; the token reached the other host)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hangar_runtime.engines import modelscope_download


def _server(handle):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            handle(self)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_the_token_is_not_sent_where_the_hub_redirects(monkeypatch):
    seen = []

    def cdn(handler):
        seen.append(("cdn", handler.headers.get("Authorization")))
        handler.send_response(200)
        handler.send_header("Content-Length", "2")
        handler.end_headers()
        handler.wfile.write(b"{}")

    other = _server(cdn)

    def hub(handler):
        seen.append(("hub", handler.headers.get("Authorization")))
        handler.send_response(302)
        # Another origin: `localhost`, not the hub's `127.0.0.1`.
        handler.send_header("Location", f"http://localhost:{other.server_address[1]}/file")
        handler.end_headers()

    first = _server(hub)
    monkeypatch.setenv("MODELSCOPE_API_TOKEN", "ms_SECRET")
    try:
        with modelscope_download._request(f"http://127.0.0.1:{first.server_address[1]}/api", 5) as answer:
            assert answer.read() == b"{}"
    finally:
        first.shutdown()
        other.shutdown()
    assert seen == [("hub", "Bearer ms_SECRET"), ("cdn", None)]
