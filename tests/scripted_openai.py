"""A scripted OpenAI-compatible endpoint on 127.0.0.1: the last user message names the answer it gets.

The prompt `CASE:<name>` picks one of `ANSWERS` (a status, a body, headers); `ONCE:<name>:<token>` answers
`<name>` the first time it sees `<token>` and a plain answer after that (a 429 then a success). `SLOW` waits
for the test to let it go (`Scripted.release`), or two seconds. Every request is kept (`Scripted.seen`):
its path with query, headers and JSON body.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


def completion(message: dict[str, Any], *, usage: Any = USAGE, finish: str = "stop") -> dict[str, Any]:
    answer: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "scripted-model",
        "system_fingerprint": "fp_scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }
    if usage is not None:
        answer["usage"] = usage
    return answer


def _call(name: str, arguments: str, call_id: str | None = "call_a") -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


_CACHED = {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010, "prompt_tokens_details": {"cached_tokens": 800}}
_TWO_CALLS = [_call("get_weather", '{"city": "Paris"}', "call_a"), _call("close_ticket", '{"ticket_id": "T-1"}', "call_b")]
_HTML_502 = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"

# name: (status, body (a JSON value, or bytes sent as they are), headers)
ANSWERS: dict[str, tuple[int, Any, dict[str, str]]] = {
    "plain": (200, completion({"content": "Sunny, 21 C."}), {}),
    "string-tokens": (200, completion({"content": "Sunny."}, usage={"prompt_tokens": "12", "completion_tokens": "5", "total_tokens": "17"}), {}),
    "no-usage": (200, completion({"content": "Sunny."}, usage=None), {}),
    "cached-tokens": (
        200,
        completion({"content": "Sunny."}, usage=_CACHED),
        {},
    ),
    "two-calls": (
        200,
        completion({"content": None, "tool_calls": _TWO_CALLS}, finish="tool_calls"),
        {},
    ),
    "bad-arguments": (200, completion({"content": None, "tool_calls": [_call("get_weather", '{"city": "Par')]}, finish="tool_calls"), {}),
    "no-call-id": (200, completion({"content": None, "tool_calls": [_call("get_weather", '{"city": "Paris"}', None)]}, finish="tool_calls"), {}),
    "content-null": (200, completion({"content": None}), {}),
    "content-parts": (200, completion({"content": [{"type": "text", "text": "Sunny, "}, {"type": "text", "text": "21 C."}]}), {}),
    "refusal": (200, completion({"content": None, "refusal": "I can't help with that."}), {}),
    "malformed-json": (200, b'{"id": "chatcmpl-x", "choices": [', {"Content-Type": "application/json"}),
    "error-with-200": (200, {"error": {"message": "upstream model overloaded, try again", "type": "server_error"}}, {}),
    "bad-gateway": (502, _HTML_502.encode(), {"Content-Type": "text/html"}),
    "unauthorized": (401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}, {}),
    "not-found": (404, {"error": {"message": "The model `scripted-model` does not exist", "type": "invalid_request_error", "code": "model_not_found"}}, {}),
    # llama.cpp's llama-server (11434) when the prompt is longer than its `-c`: its answer as it came.
    "context-exceeded": (
        400,
        {
            "error": {
                "code": 400,
                "message": "request (1334 tokens) exceeds the available context size (256 tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 1334,
                "n_ctx": 256,
            }
        },
        {},
    ),
    "rate-limited": (429, {"error": {"message": "Rate limit reached, retry in 3s", "type": "requests", "code": "rate_limit_exceeded"}}, {"Retry-After": "3"}),
}


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Scripted:
    url: str  # the base URL, without `/v1`
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    tokens: set[str] = field(default_factory=set)


def _prompt(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    return content if isinstance(content, str) else json.dumps(content)


@contextmanager
def scripted_openai() -> Iterator[Scripted]:
    """Serve the endpoint from a thread while the block runs."""
    state = Scripted(url="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            state.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            prompt = _prompt(body)
            name = prompt.partition("CASE:")[2].split()[0] if "CASE:" in prompt else "plain"
            if prompt.startswith("ONCE:"):
                _, once, token = prompt.split(":", 2)
                name = "plain" if token in state.tokens else once
                state.tokens.add(token)
            if name == "slow":
                state.release.wait(2.0)
                name = "plain"
            status, payload, headers = ANSWERS[name]
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            for header, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(header, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client that timed out has gone
                self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
