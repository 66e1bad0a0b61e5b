"""Protocol layer: the constants of MCP revision 2026-07-28 (names, keys, codes).

Pure data, no I/O. Every other layer takes its wire vocabulary from here, so a
typo in a header name or an error code can only exist in one place.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = "2026-07-28"
LEGACY_PROTOCOL_VERSION: Final = "2025-11-25"
JSONRPC_VERSION: Final = "2.0"

# params._meta keys (spec/basic/index.mdx)
META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_TRACEPARENT: Final = "traceparent"
META_TRACESTATE: Final = "tracestate"
# on every message of a subscriptions/listen stream: the JSON-RPC id of the listen request (spec/basic/patterns/subscriptions.mdx)
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
SUBSCRIPTIONS_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"

# Streamable HTTP headers (spec/basic/transports/streamable-http.mdx)
HEADER_PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
HEADER_METHOD: Final = "Mcp-Method"
HEADER_NAME: Final = "Mcp-Name"
HEADER_SESSION_ID: Final = "Mcp-Session-Id"
ACCEPT_BOTH: Final = "application/json, text/event-stream"
CONTENT_TYPE_JSON: Final = "application/json"
CONTENT_TYPE_SSE: Final = "text/event-stream"

# Methods whose request carries the target in params.name / params.uri and so
# in the Mcp-Name header.
NAMED_METHODS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

# Methods whose complete results MUST carry ttlMs and cacheScope.
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
# Only these may answer with resultType "input_required" (spec/basic/patterns/mrtr.mdx).
INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
RESULT_TYPES: Final = frozenset({"complete", "input_required"})
CACHE_SCOPES: Final = frozenset({"public", "private"})

REMOVED_METHODS: Final = ("initialize", "ping", "logging/setLevel", "resources/subscribe")

# Error codes (spec/basic/index.mdx "Error Codes")
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
# Draft numbers that never shipped, and -32002 (resource not found until
# 2025-11-25): a 2026-07-28 server must not emit them.
RETIRED_ERROR_CODES: Final = {
    -32001: "draft HeaderMismatch, now -32020",
    -32002: "resource not found until 2025-11-25, now -32602",
    -32003: "draft MissingRequiredClientCapability, now -32021",
    -32004: "draft UnsupportedProtocolVersion, now -32022",
    -32042: "retired URL-elicitation-required code",
}
# The codes a 2026-07-28 implementation MUST NOT emit (spec/basic/index.mdx "Error Codes").
FORBIDDEN_ERROR_CODES: Final = frozenset({-32002, -32042})
# -32000..-32019: the legacy implementation-defined sub-range, which new implementations SHOULD NOT use.
LEGACY_CODE_RANGE: Final = range(-32019, -31999)
# -32020..-32099: reserved for the spec; only the codes it defines may be emitted.
SPEC_CODE_RANGE: Final = range(-32099, -32019)
SPEC_DEFINED_CODES: Final = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})
