"""I/O layer: a stateless MCP 2026-07-28 client over any `Transport`, keeping every exchange.

Each call builds a self-contained request (`_meta` with version, capabilities,
client info and trace context: the active OpenTelemetry span's `traceparent` /
`tracestate`, else a fresh `traceparent`; the standard headers on HTTP), sends it
and returns an `Exchange`: what was sent and exactly what came back. Callers
may override headers or `_meta` to send deliberately wrong requests, which is
what the conformance checks do.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalcore import __version__
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.envelope import build_meta, build_notification, build_request, param_headers, standard_headers, subscription_id
from evalcore.mcp.protocol.tracecontext import request_trace_context
from evalcore.mcp.transport.base import JsonObject, Limits, RequestId, StopAt, Transport, WireFailure, WireResponse
from evalcore.redaction import clip

CLIENT_INFO = {"name": "evalcore", "version": __version__}
_UNSET: Any = object()
MAX_LIST_PAGES = 50
# The list methods, each with the key of its result's page of items.
LIST_KEYS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}


@dataclass(frozen=True)
class Exchange:
    """One call: the request as sent (last attempt) and the wire answer it got."""

    method: str
    request: JsonObject | None  # None when raw bytes were sent
    request_headers: Mapping[str, str]
    http_method: str
    wire: WireResponse
    request_ids: tuple[RequestId, ...] = field(default=())  # one per attempt; a cut stream is re-issued with a new id

    @property
    def response(self) -> JsonObject | None:
        return self.wire.response

    @property
    def result(self) -> JsonObject | None:
        result = (self.wire.response or {}).get("result")
        return result if isinstance(result, dict) else None

    @property
    def error(self) -> JsonObject | None:
        error = (self.wire.response or {}).get("error")
        return error if isinstance(error, dict) else None

    @property
    def error_code(self) -> int | None:
        code = (self.error or {}).get("code")
        return code if isinstance(code, int) else None

    @property
    def status(self) -> int | None:
        return self.wire.status

    @property
    def failure(self) -> WireFailure | None:
        return self.wire.failure

    def header(self, name: str) -> str | None:
        return self.wire.headers.get(name.lower())

    def server_said(self) -> str:
        """The server's own words when no usable response came: a JSON-RPC error under any id, else its first body bytes."""
        error = next((m["error"] for m in self.wire.messages if isinstance(m.get("error"), dict)), None)
        if isinstance(error, dict):
            return f"error {error.get('code')} {clip(str(error.get('message', '')), 100)!r}"
        body = self.wire.body.strip()
        return repr(clip(body.decode("utf-8", "replace"), 80)) if body and not self.wire.messages else ""

    def describe(self) -> str:
        """A one-line account of what came back, for check details."""
        parts = [f"{self.method}:"]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.failure is not None:
            parts.append(str(self.failure))
            said = self.server_said()
            if said:
                parts.append(f"(the server said {said})")
        elif self.error is not None:
            parts.append(f"error {self.error_code} {clip(str(self.error.get('message', '')), 100)!r}")
        elif self.result is not None:
            parts.append("result")
        elif not self.wire.body:
            parts.append("empty body")
        return " ".join(parts)


@dataclass(frozen=True)
class Listing:
    """All pages of one list method: its items and the exchanges that fetched them."""

    method: str
    items: list[dict[str, Any]]
    exchanges: list[Exchange]
    problem: str | None  # why the listing is incomplete, if it is
    failed: Exchange | None = None  # the exchange whose answer held no page, when the listing stopped at one

    def names(self) -> list[str]:
        key = "uri" if self.method in ("resources/list",) else "uriTemplate" if self.method == "resources/templates/list" else "name"
        return [str(item.get(key)) for item in self.items]


SendRequest = Callable[[str, Mapping[str, Any] | None], Awaitable[Exchange]]


class McpClient:
    """A 2026-07-28 client: no handshake, every request carries its own context."""

    def __init__(
        self,
        transport: Transport,
        *,
        client_capabilities: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.transport = transport
        self.client_capabilities = dict(client_capabilities or {})
        self.limits = limits or Limits()
        self._ids = itertools.count(1)

    def meta(self, **overrides: Any) -> JsonObject:
        """The `_meta` a conforming request carries, with the active span's trace context (or a fresh one)."""
        trace = request_trace_context()
        return build_meta(
            protocol_version=overrides.get("protocol_version", c.PROTOCOL_VERSION),
            client_capabilities=overrides.get("client_capabilities", self.client_capabilities),
            client_info=CLIENT_INFO,
            traceparent=trace["traceparent"],
            tracestate=trace.get("tracestate"),
        )

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = _UNSET,
        headers: Mapping[str, str | None] | None = None,
        protocol_version: str = c.PROTOCOL_VERSION,
    ) -> Exchange:
        """Send a request; `meta=None` omits `_meta`; a header mapped to None is left out.

        A response stream that breaks before the response arrives is re-issued
        with a NEW request id (2026-07-28 has no resumption), at most
        `limits.max_stream_retries` times.
        """
        ids: list[RequestId] = []
        while True:
            request_id = next(self._ids)
            ids.append(request_id)
            request_meta = self.meta(protocol_version=protocol_version) if meta is _UNSET else meta
            message = build_request(method, params, request_id, request_meta)
            exchange = await self._send(method, message, headers, protocol_version, request_id)
            failure = exchange.failure
            if failure is None or failure.kind != "stream_cut" or len(ids) > self.limits.max_stream_retries:
                return Exchange(exchange.method, exchange.request, exchange.request_headers, exchange.http_method, exchange.wire, tuple(ids))

    async def listen(self, notifications: Mapping[str, Any]) -> Exchange:
        """Open a `subscriptions/listen` stream, read it up to its first frame, and let it go.

        The stream stays open until someone ends it, so the read stops at the
        first message of the subscription (or a response, if the server answers
        at once). Over HTTP the stream belongs to this request alone: its first
        message is the first frame, and closing it cancels the subscription.
        Over stdio the frame is the first message carrying this request's id as
        its subscription id, and the caller ends the subscription with
        `notifications/cancelled` (spec/basic/patterns/subscriptions.mdx "Cancellation").
        """
        request_id = next(self._ids)
        scoped_stream = self.transport.kind == "http"

        def first_frame(message: JsonObject) -> bool:
            return scoped_stream or subscription_id(message) == request_id

        message = build_request("subscriptions/listen", {"notifications": dict(notifications)}, request_id, self.meta())
        return await self._send("subscriptions/listen", message, None, c.PROTOCOL_VERSION, request_id, stop_at=first_frame)

    async def notify(self, method: str, params: Mapping[str, Any] | None = None, *, headers: Mapping[str, str | None] | None = None) -> Exchange:
        message = build_notification(method, params, self.meta())
        return await self._send(method, message, headers, c.PROTOCOL_VERSION, None)

    async def send_raw(
        self, body: bytes, *, headers: Mapping[str, str], http_method: str = "POST", expect_id: RequestId | None = None, label: str = "raw"
    ) -> Exchange:
        """Send bytes as they are (GET/DELETE probes, malformed bodies)."""
        wire = await self.transport.send(body, headers=headers, expect_id=expect_id, http_method=http_method)
        return Exchange(label, None, dict(headers), http_method, wire)

    async def _send(
        self,
        method: str,
        message: JsonObject,
        header_overrides: Mapping[str, str | None] | None,
        protocol_version: str,
        expect_id: RequestId | None,
        stop_at: StopAt | None = None,
    ) -> Exchange:
        headers: dict[str, str] = standard_headers(message, protocol_version)
        for name, value in (header_overrides or {}).items():
            for existing in [key for key in headers if key.lower() == name.lower()]:
                del headers[existing]
            if value is not None:
                headers[name] = value
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        wire = await self.transport.send(body, headers=headers, expect_id=expect_id, http_method="POST", stop_at=stop_at)
        return Exchange(method, message, headers, "POST", wire, (expect_id,) if expect_id is not None else ())

    # Conveniences for the everyday calls.
    async def discover(self) -> Exchange:
        return await self.request("server/discover")

    async def list_tools(self) -> Exchange:
        """The first page of tools/list (`list_all` follows the cursors)."""
        return await self.request("tools/list")

    async def list_all(self, method: str, *, max_pages: int = MAX_LIST_PAGES, send: SendRequest | None = None) -> Listing:
        """Every page of a list method (`LIST_KEYS`), following `nextCursor`.

        The walk stops at the first answer that holds no page (`failed` is that exchange; `problem` says why) or
        after `max_pages` pages (`problem` says so; the items so far are kept). `send` sends each page's request
        (default: `self.request`); the conformance suite passes its own, which logs every exchange it judges.
        """
        send = send or self.request
        key = LIST_KEYS[method]
        items: list[dict[str, Any]] = []
        exchanges: list[Exchange] = []
        cursor: str | None = None
        for _ in range(max_pages):
            exchange = await send(method, {"cursor": cursor} if cursor else None)
            exchanges.append(exchange)
            result = exchange.result
            if result is None:
                return Listing(method, items, exchanges, exchange.describe(), exchange)
            page = result.get(key)
            if not isinstance(page, list):
                return Listing(method, items, exchanges, f"{method} result has no {key} array", exchange)
            items.extend(item for item in page if isinstance(item, dict))
            cursor = result.get("nextCursor")
            if not cursor:
                return Listing(method, items, exchanges, None)
        return Listing(method, items, exchanges, f"{method} still paginating after {max_pages} pages")

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, input_schema: Mapping[str, Any] | None = None) -> Exchange:
        """Call a tool; on HTTP, arguments its schema marks with `x-mcp-header` are mirrored into headers."""
        arguments = dict(arguments or {})
        headers = param_headers(input_schema, arguments) if self.transport.kind == "http" else {}
        return await self.request("tools/call", {"name": name, "arguments": arguments}, headers=headers or None)

    async def aclose(self) -> None:
        await self.transport.aclose()
