"""Demo server, wire helpers: JSON-RPC message shapes and ASGI plumbing.

Shared by `spec_fixes` (which must answer some requests before the SDK sees
them) and the defect layers (which rewrite messages on their way in and out).
Knows nothing about tools or defects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TypeAlias

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS
from starlette.types import Message as AsgiMessage
from starlette.types import Receive, Scope, Send

from evalcore.mcp.protocol.constants import CONTENT_TYPE_JSON, JSONRPC_VERSION

Message: TypeAlias = dict[str, Any]
"""One decoded JSON-RPC message."""

RequestId: TypeAlias = str | int | None


def request_id_of(message: object) -> RequestId:
    """The id to echo in a reply: the request's own id when it is a legal one, else null."""
    if isinstance(message, dict):
        request_id = message.get("id")
        if isinstance(request_id, str | int) and not isinstance(request_id, bool):
            return request_id
    return None


def is_request(message: object) -> bool:
    return isinstance(message, dict) and "method" in message and "id" in message


def is_notification(message: object) -> bool:
    return isinstance(message, dict) and "method" in message and "id" not in message


def error_message(request_id: RequestId, code: int, text: str, data: Any = None) -> Message:
    error: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "error": error}


def result_message(request_id: RequestId, result: dict[str, Any]) -> Message:
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result}


def http_status(message: Message, default: int = 200) -> int:
    """The status the SDK would send with this reply: its code table for errors, 200 for results."""
    error = message.get("error")
    if isinstance(error, dict):
        return ERROR_CODE_HTTP_STATUS.get(error.get("code"), default)  # type: ignore[arg-type]
    return 200


def encode(message: object) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("utf-8")


def header(scope: Scope, name: str) -> str | None:
    """First value of a request header (`name` in lower case), or None."""
    wanted = name.lower().encode("latin-1")
    for key, value in scope["headers"]:
        if key == wanted:
            return bytes(value).decode("latin-1")
    return None


def with_header(scope: Scope, name: str, value: str | None) -> Scope:
    """A copy of `scope` whose header `name` is replaced by `value` (removed when None)."""
    key = name.lower().encode("latin-1")
    headers = [(k, v) for k, v in scope["headers"] if k != key]
    if value is not None:
        headers.append((key, value.encode("latin-1")))
    return {**scope, "headers": headers}


async def read_body(receive: Receive, limit: int = DEFAULT_MAX_REQUEST_BODY_SIZE) -> bytes | None:
    """The whole request body, or None when it exceeds `limit` bytes."""
    chunks = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.extend(message.get("body", b""))
        if len(chunks) > limit:
            return None
        if not message.get("more_body", False):
            break
    return bytes(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands out `body` once, then defers to the real one (for disconnects)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> AsgiMessage:
        if pending:
            return pending.pop()
        return await receive()

    return replayed


NOT_JSON: Any = object()
"""What `decode_json` returns for bytes that are not JSON (`null` is JSON)."""


def decode_json(body: bytes | str) -> object:
    """The decoded body, or `NOT_JSON`."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return NOT_JSON


async def send_bytes(send: Send, status: int, body: bytes, content_type: str | None, extra: Iterable[tuple[str, str]] = ()) -> None:
    headers = [(b"content-length", str(len(body)).encode())]
    if content_type is not None:
        headers.append((b"content-type", content_type.encode("latin-1")))
    headers.extend((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_message(send: Send, message: Message, status: int | None = None) -> None:
    """Send one JSON-RPC reply as `application/json`, with the SDK's status for it unless given."""
    await send_bytes(send, status if status is not None else http_status(message), encode(message), CONTENT_TYPE_JSON)
