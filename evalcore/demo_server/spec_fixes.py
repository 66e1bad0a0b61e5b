"""Demo server, spec fixes: where SDK 2.3.0 deviates from 2026-07-28, and what we put around it.

Each fix is the smallest layer that makes the wire right; `--bare` leaves all of
them out so the SDK's own behaviour stays observable.

1. `UnknownToolGuard` (server middleware, both transports): the SDK answers
   `tools/call` for an unknown tool with an `isError` result; the spec wants the
   protocol error -32602 (HTTP 400).
2. `StatelessHTTPGuard` (ASGI, in front of the SDK app): the SDK picks its era
   from the `MCP-Protocol-Version` header alone, so a POST without it, or with
   an older one than `_meta` says, lands in the legacy session handler (400
   -32600 "Missing session ID" plus a fresh `Mcp-Session-Id`). The guard answers
   those itself (400 -32020, or -32022 for a legacy version), turns GET and
   DELETE into 405 + `Allow: POST`, and strips `Mcp-Session-Id` from every
   response. The SDK's Origin check still runs first.
3. `serve_modern_stdio`: `Server.run` picks the era from the first stdio message,
   so an opening `initialize` or `ping` gets a full legacy handshake. The demo
   server serves every stdio message as 2026-07-28 instead (the SDK then refuses
   a legacy `initialize` with -32022 naming the supported versions).
4. `stdio_initialize_refusal`: on that stdio loop the SDK also answers an
   `initialize` carrying the 2026 envelope with -32022 "requested 2026-07-28,
   supported [2026-07-28]"; HTTP answers the same request -32601, which is what
   a removed method gets. stdio now does too.
5. Lines the SDK's stdio reader cannot parse are dropped without a reply;
   `stdio_wire.StdioPipe` answers them -32700 (or -32600 for a non-object).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp.server.runner import _serve_modern_stream
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import unsupported_protocol_version_rejection
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalcore.demo_server import wire
from evalcore.mcp.protocol.constants import (
    HEADER_MISMATCH,
    HEADER_PROTOCOL_VERSION,
    HEADER_SESSION_ID,
    INVALID_PARAMS,
    META_PROTOCOL_VERSION,
    METHOD_NOT_FOUND,
    PROTOCOL_VERSION,
)

if TYPE_CHECKING:
    import anyio
    from mcp.server import MCPServer
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext


class UnknownToolGuard:
    """Server middleware: `tools/call` naming no registered tool is a -32602 protocol error; so are
    `prompts/get` of an unknown prompt or without a required argument (the SDK answers -32603), and a
    list request with a cursor (the server's lists are one page, so no cursor is valid; the SDK ignores it)."""

    def __init__(self, server: MCPServer) -> None:
        self._server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is not None:
            params = ctx.params or {}
            if ctx.method == "tools/call":
                name = params.get("name")
                # The tool manager's own lookup, as the SDK's tools/call handler makes it (`list_tools` would build
                # every tool's wire model for each call).
                if isinstance(name, str) and self._server._tool_manager.get_tool(name) is None:
                    raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}", data={"name": name})
            elif ctx.method == "prompts/get":
                await self._check_prompt(params)
            elif ctx.method in _LIST_METHODS and params.get("cursor") is not None:
                raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {str(params['cursor'])[:80]}")
        return await call_next(ctx)

    async def _check_prompt(self, params: Mapping[str, Any]) -> None:
        name = params.get("name")
        prompt = next((p for p in await self._server.list_prompts() if p.name == name), None)
        if prompt is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {name}", data={"name": name})
        given = params.get("arguments") or {}
        missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in given]
        if missing:
            raise MCPError(code=INVALID_PARAMS, message=f"Missing required arguments: {', '.join(missing)}", data={"missing": missing})


_LIST_METHODS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})


_VERSION_HEADER = HEADER_PROTOCOL_VERSION.lower()
_SESSION_HEADER = HEADER_SESSION_ID.lower().encode("latin-1")
_ABSENT = object()


def version_header_verdict(version_header: str | None, decoded: object) -> wire.Message | str:
    """The refusal for a POST body, or the `MCP-Protocol-Version` value to forward it to the SDK with.

    Forwarding always carries a non-legacy version, because the SDK sends any
    other POST to its session-minting legacy handler.
    """
    if not isinstance(decoded, dict):
        return PROTOCOL_VERSION  # the SDK's 2026 entry answers parse errors and batches itself
    if "id" not in decoded:
        # Header rules for notification POSTs are undefined at this revision: accept unless legacy.
        if version_header in HANDSHAKE_PROTOCOL_VERSIONS:
            return _unsupported(None, version_header or "")
        return version_header or PROTOCOL_VERSION
    request_id = wire.request_id_of(decoded)
    params = decoded.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    body_version = meta.get(META_PROTOCOL_VERSION, _ABSENT) if isinstance(meta, dict) else _ABSENT
    if version_header is None:
        return wire.error_message(
            request_id,
            HEADER_MISMATCH,
            f"Missing {HEADER_PROTOCOL_VERSION} header; this server speaks protocol version {PROTOCOL_VERSION} only",
        )
    if body_version is not _ABSENT and body_version != version_header:
        return wire.error_message(
            request_id,
            HEADER_MISMATCH,
            f"Header mismatch: {HEADER_PROTOCOL_VERSION} {version_header!r} does not match _meta {META_PROTOCOL_VERSION} {body_version!r}",
        )
    if version_header in HANDSHAKE_PROTOCOL_VERSIONS:
        return _unsupported(request_id, version_header)
    return version_header


def _unsupported(request_id: wire.RequestId, requested: str) -> wire.Message:
    rejection = unsupported_protocol_version_rejection(requested)
    assert rejection is not None, "only called for versions the SDK does not serve statelessly"
    return wire.error_message(request_id, rejection.code, rejection.message, rejection.data)


class StatelessHTTPGuard:
    """ASGI middleware: every exchange on the MCP endpoint stays on the SDK's 2026-07-28 path."""

    def __init__(self, app: ASGIApp, *, path: str, security: TransportSecuritySettings) -> None:
        self._app = app
        self._path = path
        self._security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        send = _without_session_id(send)
        if scope["method"] != "POST":
            # The SDK's 2026 entry checks Origin, then answers 405 with `Allow: POST`.
            await self._app(wire.with_header(scope, _VERSION_HEADER, PROTOCOL_VERSION), receive, send)
            return
        body = await wire.read_body(receive)
        if body is None:
            await wire.send_bytes(send, 413, b"Request body too large", "text/plain")
            return
        receive = wire.replay(body, receive)
        # Origin (DNS rebinding) and Content-Type come before any JSON-RPC answer of ours.
        refusal = await self._security.validate_request(Request(scope, receive), is_post=True)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        verdict = version_header_verdict(wire.header(scope, _VERSION_HEADER), wire.decode_json(body))
        if isinstance(verdict, dict):
            await wire.send_message(send, verdict)
            return
        await self._app(wire.with_header(scope, _VERSION_HEADER, verdict), receive, send)


def _without_session_id(send: Send) -> Send:
    async def send_stripped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [(k, v) for k, v in message["headers"] if k.lower() != _SESSION_HEADER]}
        await send(message)

    return send_stripped


def stdio_initialize_refusal(message: wire.Message) -> wire.Message | None:
    """The -32601 reply for an `initialize` that carries the 2026 envelope, else None."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if message.get("method") == "initialize" and isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return wire.error_message(wire.request_id_of(message), METHOD_NOT_FOUND, "Method not found", "initialize")
    return None


async def serve_modern_stdio(server: MCPServer, stdin: anyio.AsyncFile[str] | None = None, stdout: anyio.AsyncFile[str] | None = None) -> None:
    """Serve `server` over stdio, every message as 2026-07-28, never the legacy handshake."""
    lowlevel = server._lowlevel_server  # no public accessor; MCPServer.run_stdio_async reaches it the same way
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream), lowlevel.lifespan(lowlevel) as lifespan_state:
        try:
            await _serve_modern_stream(lowlevel, read_stream, write_stream, lifespan_state=lifespan_state, raise_exceptions=False)
        finally:
            await write_stream.aclose()
