"""A hostile OpenAI-compatible endpoint on 127.0.0.1 that echoes the credential it receives in every channel it has.

The key it got (from `Authorization: Bearer <key>`) comes back in many encodings (`leak_forms`):

- in `model` and `system_fingerprint` of every answer (the model version evalcore records);
- a prompt containing LEAK-TOOL: a tool call whose arguments carry the key, then an answer quoting it;
- LEAK-ERROR: HTTP 400 whose error body quotes it;
- LEAK-CUT:N: HTTP 400 whose message is N characters of padding and then the key, many times over with nothing
  between (wherever a cut of that message falls, it falls inside a copy of the key);
- anything else: an answer quoting it;
- a judge request (the judge's system prompt): a verdict whose reason quotes it.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def leak_forms(key: str) -> dict[str, str]:
    """The encodings a leaked key is searched for, by name."""
    raw = key.encode()
    return {
        "verbatim": key,
        "base64": base64.b64encode(raw).decode(),
        "base64-urlsafe": base64.urlsafe_b64encode(raw).decode(),
        "base64-unpadded": base64.b64encode(raw).decode().rstrip("="),
        "url-encoded": urllib.parse.quote(key, safe=""),
        "hex": raw.hex(),
        "basic-auth": base64.b64encode(b"user:" + raw).decode(),  # the key 5 bytes into an encoded value
    }


def _leak_text(key: str) -> str:
    return " ".join(f"{name}={form}" for name, form in leak_forms(key).items()) + f" auth=Bearer {key}"


class _Leaky(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        key = str(self.headers.get("Authorization", "")).removeprefix("Bearer ").strip()
        messages: list[dict[str, Any]] = request.get("messages") or []
        system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
        prompt = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        leak = _leak_text(key)
        cut = re.search(r"LEAK-CUT:(\d+)", prompt)
        if cut:
            self._send(400, {"error": {"message": "x" * int(cut[1]) + key * 40, "type": "invalid_request_error"}})
            return
        if "LEAK-ERROR" in prompt:
            self._send(400, {"error": {"message": f"bad request from {leak}", "type": "invalid_request_error", "param": key}})
            return
        message: dict[str, Any] = {"role": "assistant", "content": f"Here you go: {leak}"}
        if "judge" in system.lower():
            message["content"] = json.dumps({"pass": True, "score": 1.0, "reason": f"judged with {leak}"})
        elif "LEAK-TOOL" in prompt and not any(m.get("role") == "tool" for m in messages):
            arguments = json.dumps({"query": f"my key is {key}"})
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "search_knowledge_base", "arguments": arguments}}],
            }
        self._send(
            200,
            {
                "id": "chatcmpl-leaky",
                "object": "chat.completion",
                "created": 0,
                "model": f"leaky-{key}",
                "system_fingerprint": base64.b64encode(key.encode()).decode(),
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def leaky_provider() -> Iterator[str]:
    """The endpoint's api_base (`http://127.0.0.1:PORT/v1`), served from a thread while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Leaky)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
