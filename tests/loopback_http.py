"""A test HTTP server on 127.0.0.1, served from a thread for as long as a `with` block runs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer) -> Iterator[str]:
    """Serve `handler` on a free loopback port; yield the base URL (`http://127.0.0.1:PORT`)."""
    server = server_class(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
