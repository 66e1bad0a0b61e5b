"""An OpenAI-compatible endpoint on 127.0.0.1 that rate-limits as told: per route, a list of answers to give in turn.

    with throttling_provider() as provider:
        base = provider.route("twice", [429, 429], retry_after="7")   # two 429s with Retry-After: 7, then answers
        ... provider.requests["twice"] == 3

An answer in the list is an HTTP status (429: a rate-limit error body); once the list is used up, every request gets
a normal chat completion. `retry_after` (seconds or an HTTP date) and `retry_after_ms` go on each 429.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class _Route:
    answers: list[int]
    headers: dict[str, str]


@dataclass
class ThrottlingProvider:
    port: int = 0
    routes: dict[str, _Route] = field(default_factory=dict)
    requests: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def route(self, name: str, answers: Sequence[int], *, retry_after: str | None = None, retry_after_ms: str | None = None) -> str:
        """Register a route; returns its api_base."""
        headers = {key: value for key, value in (("Retry-After", retry_after), ("retry-after-ms", retry_after_ms)) if value is not None}
        with self.lock:
            self.routes[name] = _Route(list(answers), headers)
        return f"http://127.0.0.1:{self.port}/{name}/v1"

    def next_answer(self, name: str) -> tuple[int, dict[str, str]]:
        with self.lock:
            self.requests[name] += 1
            route = self.routes.get(name)
            if route is None or not route.answers:
                return 200, {}
            return route.answers.pop(0), route.headers


def _handler(provider: ThrottlingProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status, headers = provider.next_answer(self.path.strip("/").split("/")[0])
            if status == 200:
                message = {"role": "assistant", "content": "fine"}
                body = {
                    "id": "chatcmpl-throttled",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "throttled-1",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
                }
            else:
                body = {"error": {"message": "Rate limit reached, slow down" if status == 429 else "failed", "type": "rate_limit_error"}}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def throttling_provider() -> Iterator[ThrottlingProvider]:
    provider = ThrottlingProvider()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    server.daemon_threads = True
    provider.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()
