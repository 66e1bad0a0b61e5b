"""Protocol layer: build 2026-07-28 requests, their `_meta` and their HTTP headers.

Pure functions, no I/O. Every request is self-contained (the revision is
stateless): protocol version and client capabilities travel in
`params._meta` of each request, mirrored into headers on HTTP.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from evalcore.mcp.protocol import constants as c

JsonObject = dict[str, Any]
RequestId = int | str

_VISIBLE_ASCII = re.compile(r"[\x20-\x7e]*")
_BASE64_SENTINEL = re.compile(r"=\?base64\?(?P<payload>.*)\?=")


def build_meta(
    *,
    protocol_version: str = c.PROTOCOL_VERSION,
    client_capabilities: Mapping[str, Any] | None = None,
    client_info: Mapping[str, str] | None = None,
    traceparent: str | None = None,
    tracestate: str | None = None,
) -> JsonObject:
    """The `_meta` every request carries: version and capabilities (required), client info, trace context."""
    meta: JsonObject = {
        c.META_PROTOCOL_VERSION: protocol_version,
        c.META_CLIENT_CAPABILITIES: dict(client_capabilities or {}),
    }
    if client_info is not None:
        meta[c.META_CLIENT_INFO] = dict(client_info)
    if traceparent is not None:
        meta[c.META_TRACEPARENT] = traceparent
    if tracestate:
        meta[c.META_TRACESTATE] = tracestate
    return meta


def build_request(method: str, params: Mapping[str, Any] | None, request_id: RequestId, meta: Mapping[str, Any] | None) -> JsonObject:
    """A JSON-RPC request; `meta=None` sends no `_meta` at all (for negative checks)."""
    merged: JsonObject = dict(params or {})
    if meta is not None:
        merged["_meta"] = dict(meta)
    return {"jsonrpc": c.JSONRPC_VERSION, "id": request_id, "method": method, "params": merged}


def build_notification(method: str, params: Mapping[str, Any] | None, meta: Mapping[str, Any] | None) -> JsonObject:
    """A JSON-RPC notification (no id, so no response is expected)."""
    message = build_request(method, params, 0, meta)
    del message["id"]
    return message


def subscription_id(message: Mapping[str, Any]) -> object:
    """The `_meta` subscription id a message carries (None without one): which listen stream it belongs to."""
    params = message.get("params") if "method" in message else message.get("result")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(c.META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None


def encode_header_value(value: str) -> str:
    """Encode a header value per the 2026-07-28 rule for values that are not plain visible ASCII.

    Plain visible ASCII (0x20-0x7E) without edge whitespace goes verbatim; anything
    else, or a value that itself looks like the sentinel, becomes
    `=?base64?<base64 of the UTF-8 bytes>?=`.
    """
    if _VISIBLE_ASCII.fullmatch(value) and value == value.strip() and not _BASE64_SENTINEL.fullmatch(value):
        return value
    return force_base64_header_value(value)


def force_base64_header_value(value: str) -> str:
    """The sentinel form of any value (servers must decode it even when not needed)."""
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str) -> str | None:
    """Inverse of `encode_header_value`; None for a malformed sentinel."""
    match = _BASE64_SENTINEL.fullmatch(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match.group("payload"), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def standard_headers(message: Mapping[str, Any], protocol_version: str = c.PROTOCOL_VERSION) -> dict[str, str]:
    """The headers a conforming client sends with `message` on a Streamable HTTP POST."""
    headers = {
        "Content-Type": c.CONTENT_TYPE_JSON,
        "Accept": c.ACCEPT_BOTH,
        c.HEADER_PROTOCOL_VERSION: protocol_version,
        c.HEADER_METHOD: str(message.get("method", "")),
    }
    name = named_target(message)
    if name is not None:
        headers[c.HEADER_NAME] = encode_header_value(name)
    return headers


def named_target(message: Mapping[str, Any]) -> str | None:
    """`params.name` or `params.uri` for the methods whose target goes in `Mcp-Name`."""
    key = c.NAMED_METHODS.get(str(message.get("method", "")))
    params = message.get("params")
    if key is None or not isinstance(params, Mapping):
        return None
    value = params.get(key)
    return value if isinstance(value, str) else None


def param_headers(input_schema: Mapping[str, Any] | None, arguments: Mapping[str, Any]) -> dict[str, str]:
    """`Mcp-Param-{Name}` headers for the `x-mcp-header` properties of a tool (streamable-http.mdx, Custom Headers).

    Only properties reachable from the root through `properties` alone count;
    a value that is absent or null sends no header.
    """
    headers: dict[str, str] = {}

    def walk(schema: object, instance: object) -> None:
        if not isinstance(schema, Mapping) or not isinstance(instance, Mapping):
            return
        for name, sub in (schema.get("properties") or {}).items():
            if not isinstance(sub, Mapping) or name not in instance or instance[name] is None:
                continue
            header = sub.get("x-mcp-header")
            value = instance[name]
            if isinstance(header, str) and header and isinstance(value, bool | int | str):
                text = ("true" if value else "false") if isinstance(value, bool) else str(value)
                headers[f"Mcp-Param-{header}"] = encode_header_value(text)
            walk(sub, value)

    walk(input_schema, arguments)
    return headers
