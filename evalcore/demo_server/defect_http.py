"""Demo server, HTTP defect layer: the ASGI middleware that applies one `Tamper` to every exchange.

Sits outermost, in front of `spec_fixes.StatelessHTTPGuard`, so a defect can
rewrite what the fixed server sees and what it answered. JSON replies are
buffered, decoded, rewritten and re-encoded; SSE replies are rewritten one
event at a time so long-lived streams keep flowing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalcore.demo_server import wire
from evalcore.demo_server.tamper import Answer, HttpReply, HttpRequest, Tamper
from evalcore.mcp.protocol.constants import CONTENT_TYPE_JSON, CONTENT_TYPE_SSE


class TamperMiddleware:
    """ASGI middleware applying one defect's hooks on the MCP endpoint."""

    def __init__(self, app: ASGIApp, *, path: str, tamper: Tamper) -> None:
        self._app = app
        self._path = path
        self._tamper = tamper

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        body = b""
        if scope["method"] == "POST":
            read = await wire.read_body(receive)
            if read is None:
                await wire.send_bytes(send, 413, b"Request body too large", "text/plain")
                return
            body = read
        headers = {bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1") for k, v in scope["headers"]}
        exchange = HttpRequest(method=scope["method"], headers=headers, body=wire.decode_json(body) if body else wire.NOT_JSON)
        send = _HeaderRewriter(send, self._tamper, exchange)

        if self._tamper.http_request is not None:
            outcome = self._tamper.http_request(exchange)
            if isinstance(outcome, HttpReply):
                await wire.send_bytes(send, outcome.status, outcome.body, outcome.content_type)
                return
            for name, value in outcome.items():
                scope = wire.with_header(scope, name, value)

        request = exchange.body if wire.is_request(exchange.body) else None
        if request is not None and self._tamper.request is not None:
            rewritten = self._tamper.request(request)  # type: ignore[arg-type]
            if isinstance(rewritten, Answer):
                await wire.send_message(send, rewritten.message)
                return
            if rewritten is not request:
                request, body = rewritten, wire.encode(rewritten)
                scope = wire.with_header(scope, "content-length", str(len(body)))
        if request is not None and self._tamper.response is not None:
            send = _ReplyRewriter(send, self._tamper, request)  # type: ignore[arg-type]
        await self._app(scope, wire.replay(body, receive), send)


class _HeaderRewriter:
    """Applies `Tamper.http_headers` to the response start line."""

    def __init__(self, send: Send, tamper: Tamper, exchange: HttpRequest) -> None:
        self._send, self._tamper, self._exchange = send, tamper, exchange

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and self._tamper.http_headers is not None:
            pairs = [(bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in message["headers"]]
            pairs = self._tamper.http_headers(self._exchange, pairs)
            message = {**message, "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs]}
        await self._send(message)


@dataclass
class _ReplyRewriter:
    """Applies `Tamper.response` to the JSON-RPC reply, buffered (JSON) or per event (SSE)."""

    send: Send
    tamper: Tamper
    request: wire.Message
    start: Message | None = None
    mode: str = "pass"
    chunks: bytearray = field(default_factory=bytearray)

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            content_type = _content_type(message)
            if content_type.startswith(CONTENT_TYPE_JSON):
                self.start, self.mode = message, "json"
                return
            self.mode = "sse" if content_type.startswith(CONTENT_TYPE_SSE) else "pass"
            await self.send(message)
            return
        if message["type"] != "http.response.body" or self.mode == "pass":
            await self.send(message)
            return
        if self.mode == "sse":
            await self.send({**message, "body": self._rewrite_events(message.get("body", b""))})
            return
        self.chunks.extend(message.get("body", b""))
        if not message.get("more_body", False):
            await self._flush_json()

    async def _flush_json(self) -> None:
        assert self.start is not None
        status, body = self.start["status"], bytes(self.chunks)
        reply = wire.decode_json(body)
        if isinstance(reply, dict):
            was_error = "error" in reply
            reply = self._rewrite(reply)
            body = wire.encode(reply)
            if was_error or "error" in reply:
                status = wire.http_status(reply, default=status)
        headers = [(k, v) for k, v in self.start["headers"] if bytes(k).lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.send({**self.start, "status": status, "headers": headers})
        await self.send({"type": "http.response.body", "body": body, "more_body": False})

    def _rewrite_events(self, chunk: bytes) -> bytes:
        lines = chunk.decode("utf-8").split("\n")
        for index, line in enumerate(lines):
            if line.startswith("data:"):
                reply = wire.decode_json(line[5:].strip())
                if isinstance(reply, dict) and ("result" in reply or "error" in reply):
                    lines[index] = "data: " + json.dumps(self._rewrite(reply), separators=(",", ":")) + ("\r" if line.endswith("\r") else "")
        return "\n".join(lines).encode("utf-8")

    def _rewrite(self, reply: wire.Message) -> wire.Message:
        assert self.tamper.response is not None
        return self.tamper.response(self.request, reply)


def _content_type(start: Message) -> str:
    for key, value in start.get("headers", []):
        if bytes(key).lower() == b"content-type":
            return bytes(value).decode("latin-1").lower()
    return ""
