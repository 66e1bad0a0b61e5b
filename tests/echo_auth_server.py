"""A hostile OpenAI-compatible endpoint: refuses every call and echoes the Authorization header it got.

`echo_auth_server(seen)` also appends every Authorization header it got to `seen`, so a test can tell the key really went out.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _EchoAuth(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    seen: list[str] | None = None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.seen is not None:
            self.seen.append(str(self.headers.get("Authorization")))
        body = json.dumps({"error": {"message": f"invalid credentials: {self.headers.get('Authorization')}", "type": "invalid_request_error"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def echo_auth_server(seen: list[str] | None = None) -> Iterator[str]:
    handler = type("_EchoAuthRecording", (_EchoAuth,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
