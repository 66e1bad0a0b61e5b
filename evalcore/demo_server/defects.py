"""Demo server, defect registry: named ways to break exactly one 2026-07-28 rule.

The conformance suite proves each check can fail by running it against the
reference server with one defect switched on (`--defect NAME`). A defect
builds a `tamper.Tamper`: hooks on parsed JSON-RPC messages (applied by both
`defect_http` and `stdio_wire`, so one transformation serves both transports)
and, for rules that only exist on HTTP, hooks on the HTTP exchange. `DEFECTS` is the contract:
tests elsewhere iterate it, so names never change meaning.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Final

from evalcore.demo_server import wire
from evalcore.demo_server.app import INSTRUCTIONS, SERVER_NAME, SERVER_VERSION
from evalcore.demo_server.tamper import Answer, HeaderEdits, HeaderList, HttpReply, HttpRequest, Tamper
from evalcore.mcp.protocol.constants import (
    CACHEABLE_METHODS,
    CONTENT_TYPE_JSON,
    CONTENT_TYPE_SSE,
    HEADER_METHOD,
    HEADER_MISMATCH,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    HEADER_SESSION_ID,
    INVALID_PARAMS,
    LEGACY_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    NAMED_METHODS,
    PROTOCOL_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
)

BASE64_SENTINEL_PREFIX: Final = "=?base64?"


@dataclass(frozen=True)
class Defect:
    """One registered defect; `build()` gives a fresh `Tamper` (some keep per-process counters)."""

    name: str
    description: str
    http_only: bool
    build: Callable[[], Tamper] = field(repr=False)


def _answering(method: str, result: Callable[[], dict[str, Any]]) -> Callable[[wire.Message], wire.Message | Answer]:
    """A request hook that answers `method` itself with `result()`."""

    def request(message: wire.Message) -> wire.Message | Answer:
        if message.get("method") == method:
            return Answer(wire.result_message(wire.request_id_of(message), result()))
        return message

    return request


def _edit_results(edit: Callable[[dict[str, Any]], None], methods: Collection[str] | None = None) -> Callable[[wire.Message, wire.Message], wire.Message]:
    """A response hook running `edit` in place on results of `methods` (all methods when None)."""

    def response(request: wire.Message, reply: wire.Message) -> wire.Message:
        result = reply.get("result")
        if isinstance(result, dict) and (methods is None or request.get("method") in methods):
            edit(result)
        return reply

    return response


def _edit_errors(code: int, edit: Callable[[dict[str, Any]], None], method: str | None = None) -> Callable[[], Tamper]:
    def response(request: wire.Message, reply: wire.Message) -> wire.Message:
        error = reply.get("error")
        if isinstance(error, dict) and error.get("code") == code and method in (None, request.get("method")):
            edit(error)
        return reply

    return lambda: Tamper(response=response)


def _results(edit: Callable[[dict[str, Any]], None], methods: Collection[str] | None = None) -> Callable[[], Tamper]:
    return lambda: Tamper(response=_edit_results(edit, methods))


def _first_tool(edit: Callable[[dict[str, Any]], None]) -> Callable[[], Tamper]:
    """Edit the first tool of every tools/list result, leaving the others valid."""

    def edit_list(result: dict[str, Any]) -> None:
        tools = result.get("tools")
        if isinstance(tools, list) and tools and isinstance(tools[0], dict):
            edit(tools[0])

    return _results(edit_list, {"tools/list"})


def _rotating(list_keys: dict[str, str]) -> Callable[[], Tamper]:
    """Rotate the list under `list_keys[method]` by one more place on each call of that method."""

    def build() -> Tamper:
        counters = {method: itertools.count() for method in list_keys}

        def response(request: wire.Message, reply: wire.Message) -> wire.Message:
            method, result = request.get("method"), reply.get("result")
            if method in counters and isinstance(result, dict) and isinstance(result.get(list_keys[method]), list):
                items = result[list_keys[method]]
                shift = next(counters[method]) % max(len(items), 1)
                result[list_keys[method]] = items[shift:] + items[:shift]
            return reply

        return Tamper(response=response)

    return build


def _drop_server_info(result: dict[str, Any]) -> None:
    meta = result.get("_meta")
    if isinstance(meta, dict):
        meta.pop(META_SERVER_INFO, None)
        if not meta:
            del result["_meta"]


def _first_property(schema: dict[str, Any], replacement: dict[str, Any]) -> None:
    properties = schema.setdefault("properties", {})
    name = next(iter(properties), "value")
    properties[name] = replacement


def _mismatch_structured_content(result: dict[str, Any]) -> None:
    content = result.get("structuredContent")
    if result.get("isError") or not isinstance(content, dict) or not content:
        return
    name, value = next(iter(content.items()))
    # A value of another JSON type than the schema declares: a string becomes a number, anything else a string.
    content[name] = 12345 if isinstance(value, str) else "not-a-" + type(value).__name__


def _strip_content(result: dict[str, Any]) -> None:
    if not result.get("isError"):
        result.pop("content", None)


def _lax_meta(message: wire.Message) -> wire.Message | Answer:
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    if META_PROTOCOL_VERSION in meta and META_CLIENT_CAPABILITIES in meta:
        return message
    meta = {META_PROTOCOL_VERSION: PROTOCOL_VERSION, META_CLIENT_CAPABILITIES: {}, **meta}
    return {**message, "params": {**params, "_meta": meta}}


def _no_discover(message: wire.Message) -> wire.Message | Answer:
    if message.get("method") == "server/discover":
        return Answer(wire.error_message(wire.request_id_of(message), METHOD_NOT_FOUND, "Method not found", "server/discover"))
    return message


def _initialize_result() -> dict[str, Any]:
    return {
        "protocolVersion": LEGACY_PROTOCOL_VERSION,
        "capabilities": {"tools": {"listChanged": False}, "resources": {}, "prompts": {"listChanged": False}},
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
        "instructions": INSTRUCTIONS,
    }


def _unnamed_initialize_refusal(request: wire.Message, reply: wire.Message) -> wire.Message:
    error = reply.get("error")
    if request.get("method") == "initialize" and isinstance(error, dict):
        error["message"] = "Bad Request"
        error.pop("data", None)
    return reply


def _params(message: wire.Message) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _strip_cursor(message: wire.Message) -> wire.Message | Answer:
    params = _params(message)
    if message.get("method") in _LIST_METHODS and "cursor" in params:
        return {**message, "params": {k: v for k, v in params.items() if k != "cursor"}}
    return message


def _looping_cursor(result: dict[str, Any]) -> None:
    result["nextCursor"] = "evalcore-same-page-again"


def _serve_null_id(message: wire.Message) -> wire.Message | Answer:
    if message.get("id", 0) is None:
        return Answer({"jsonrpc": "2.0", "id": None, "result": {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}})
    return message


def _serve_malformed_id(message: wire.Message) -> wire.Message | Answer:
    request_id = message.get("id", 0)
    if request_id is not None and (not isinstance(request_id, int | str) or isinstance(request_id, bool)):
        return Answer({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}})
    return message


def _answer_batch(batch: list[object]) -> list[object]:
    """Every request of a batch answered with an empty result: the JSON-RPC 2.0 way, which MCP dropped."""
    done = {"resultType": "complete"}
    return [wire.result_message(item.get("id"), done) for item in batch if isinstance(item, dict) and "id" in item]


def _answer_cancellation(message: wire.Message) -> wire.Message | None:
    if message.get("method") == "notifications/cancelled":
        return wire.error_message(None, METHOD_NOT_FOUND, "Method not found")
    return None


def _listen_ends_unacknowledged(message: wire.Message) -> wire.Message | Answer:
    if message.get("method") == "subscriptions/listen":
        listen_id = wire.request_id_of(message)
        ended = {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id}}
        return Answer(wire.result_message(listen_id, ended))
    return message


def _refuse_input_responses(message: wire.Message) -> wire.Message | Answer:
    if message.get("method") == "tools/call" and "inputResponses" in _params(message):
        return Answer(wire.error_message(wire.request_id_of(message), -32603, "Internal error"))
    return message


def _complete_without_input(message: wire.Message) -> wire.Message | Answer:
    params = _params(message)
    if message.get("method") == "tools/call" and "requestState" in params and "inputResponses" not in params:
        done = {"content": [{"type": "text", "text": "done"}], "isError": False, "resultType": "complete"}
        return Answer(wire.result_message(wire.request_id_of(message), done))
    return message


def _answer_unknown_methods(message: wire.Message) -> wire.Message | Answer:
    method = message.get("method")
    if isinstance(method, str) and method.endswith("/no_such_method") and "id" in message:
        return Answer(wire.result_message(wire.request_id_of(message), {"resultType": "complete"}))
    return message


def _ask_undeclared(message: wire.Message) -> wire.Message | Answer:
    """Serve every tools/call as if the client had declared elicitation, sampling and roots, whatever it declared."""
    params = _params(message)
    if message.get("method") != "tools/call" or not isinstance(params.get("_meta"), dict):
        return message
    meta = {**params["_meta"], META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}}
    return {**message, "params": {**params, "_meta": meta}}


def _refuse_unrequested_answers(message: wire.Message) -> wire.Message | Answer:
    """Refuse a retry with more than one answer (each reference tool asks for one), as a server refusing keys it did not ask for."""
    responses = _params(message).get("inputResponses")
    if message.get("method") == "tools/call" and isinstance(responses, dict) and len(responses) > 1:
        return Answer(wire.error_message(wire.request_id_of(message), INVALID_PARAMS, "Unexpected input response"))
    return message


def _accept_invalid_answers(message: wire.Message) -> wire.Message | Answer:
    responses = _params(message).get("inputResponses")
    if message.get("method") == "tools/call" and isinstance(responses, dict) and any(not isinstance(r, dict) for r in responses.values()):
        done = {"content": [{"type": "text", "text": "done"}], "isError": False, "resultType": "complete"}
        return Answer(wire.result_message(wire.request_id_of(message), done))
    return message


def _progress_stream(token_of: Callable[[object], object], values: tuple[float, ...]) -> Callable[[], Tamper]:
    """A tools/call carrying a progressToken is answered on an SSE stream: progress notifications, then a plain result."""

    def http_request(request: HttpRequest) -> HeaderEdits | HttpReply:
        body = request.body
        params = body.get("params") if isinstance(body, dict) and body.get("method") == "tools/call" else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if request.method != "POST" or token is None:
            return {}
        done = {"content": [{"type": "text", "text": "done"}], "isError": False, "resultType": "complete"}
        events: list[object] = [
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token_of(token), "progress": value, "total": 3}}
            for value in values
        ]
        events.append(wire.result_message(wire.request_id_of(body), done))
        return HttpReply(200, b"".join(b"event: message\ndata: " + wire.encode(event) + b"\n\n" for event in events), CONTENT_TYPE_SSE)

    return lambda: Tamper(http_request=http_request)


def _ask_again_empty(message: wire.Message) -> wire.Message | Answer:
    """A tools/call retry with inputResponses answers input_required once more, with neither inputRequests nor requestState."""
    params = _params(message)
    if message.get("method") == "tools/call" and "inputResponses" in params:
        return Answer(wire.result_message(wire.request_id_of(message), {"resultType": "input_required"}))
    return message


_PROMPT_INPUT_REQUEST = {
    "confirm": {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Confirm?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
    }
}


def _prompt_retry_refused(message: wire.Message) -> wire.Message | Answer:
    """prompts/get asks for input (MRTR), then refuses the retry that carries it with -32603."""
    params = _params(message)
    if message.get("method") != "prompts/get":
        return message
    if "inputResponses" in params:
        return Answer(wire.error_message(wire.request_id_of(message), -32603, "Internal error"))
    asked = {"resultType": "input_required", "inputRequests": _PROMPT_INPUT_REQUEST, "requestState": "evalcore-defect-prompt"}
    return Answer(wire.result_message(wire.request_id_of(message), asked))


def _crossed_ids() -> Tamper:
    """Each tools/list is answered with the id of the tools/list before it, as a server that crosses concurrent response streams."""
    previous: list[object] = []

    def response(request: wire.Message, reply: wire.Message) -> wire.Message:
        if request.get("method") != "tools/list" or "id" not in reply:
            return reply
        crossed = previous[-1] if previous else reply["id"]
        previous.append(reply["id"])
        return {**reply, "id": crossed}

    return Tamper(response=response)


def _drop_content_uris(result: dict[str, Any]) -> None:
    for content in result.get("contents") or []:
        if isinstance(content, dict):
            content.pop("uri", None)


def _declare_completions(result: dict[str, Any]) -> None:
    capabilities = result.get("capabilities")
    if isinstance(capabilities, dict):
        capabilities["completions"] = {}


def _rename_first_tool(tool: dict[str, Any]) -> None:
    tool["name"] = "get weather, now"


def _session_header(request: HttpRequest, headers: HeaderList) -> HeaderList:
    return [*headers, (HEADER_SESSION_ID, uuid.uuid4().hex)]


def _has_modern_meta(message: object) -> bool:
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


def _modern_initialize_answered(message: wire.Message) -> wire.Message | Answer:
    """Answer an `initialize` that carries the 2026 envelope; a legacy one is still refused, so the server stays modern-only."""
    if message.get("method") == "initialize" and _has_modern_meta(message):
        return Answer(wire.result_message(wire.request_id_of(message), _initialize_result()))
    return message


def _session_on_initialize(request: HttpRequest, headers: HeaderList) -> HeaderList:
    if isinstance(request.body, dict) and request.body.get("method") == "initialize" and _has_modern_meta(request.body):
        return _session_header(request, headers)
    return headers


def _every_initialize_answered(message: wire.Message) -> wire.Message | Answer:
    """Answer every `initialize`, legacy or with the 2026 envelope, the legacy way: a dual-era server that misses the envelope."""
    if message.get("method") == "initialize":
        return Answer(wire.result_message(wire.request_id_of(message), _initialize_result()))
    return message


def _session_on_every_initialize(request: HttpRequest, headers: HeaderList) -> HeaderList:
    if isinstance(request.body, dict) and request.body.get("method") == "initialize":
        return _session_header(request, headers)
    return headers


def _drop_result_type_on_tool_errors(request: wire.Message, reply: wire.Message) -> wire.Message:
    result = reply.get("result")
    if request.get("method") == "tools/call" and isinstance(result, dict) and result.get("isError") is True:
        result.pop("resultType", None)
    return reply


def _malformed_reply_prompt(request: wire.Message, reply: wire.Message) -> wire.Message:
    """Only the second listed prompt (the one a check reading just the first never gets) answers an unknown message role."""
    result = reply.get("result")
    if request.get("method") == "prompts/get" and _params(request).get("name") == "draft_customer_reply" and isinstance(result, dict):
        for message in result.get("messages") or []:
            if isinstance(message, dict):
                message["role"] = "system"
    return reply


def _body_field(request: HttpRequest, *path: str) -> Any:
    node: Any = request.body
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _named_value(request: HttpRequest) -> Any:
    key = NAMED_METHODS.get(_body_field(request, "method"))
    return _body_field(request, "params", key) if key else None


def _mirror_header(name: str, value_of: Callable[[HttpRequest], Any]) -> Callable[[], Tamper]:
    """Overwrite a request header with the body's value, so whatever the client sent is accepted.

    A body without the value keeps the header as sent, so only this one check is switched off.
    """

    def http_request(request: HttpRequest) -> HeaderEdits | HttpReply:
        value = value_of(request) if wire.is_request(request.body) else None
        return {name.lower(): value} if isinstance(value, str) else {}

    return lambda: Tamper(http_request=http_request)


def _raw_name_compare(request: HttpRequest) -> HeaderEdits | HttpReply:
    sent, expected = request.headers.get(HEADER_NAME.lower(), ""), _named_value(request)
    if sent.startswith(BASE64_SENTINEL_PREFIX) and sent != expected:
        message = wire.error_message(wire.request_id_of(request.body), HEADER_MISMATCH, f"Header mismatch: {HEADER_NAME} {sent!r} != {expected!r}")
        return HttpReply(400, wire.encode(message), CONTENT_TYPE_JSON)
    return {}


def _on_http_method(verb: str, reply: HttpReply) -> Callable[[], Tamper]:
    def http_request(request: HttpRequest) -> HeaderEdits | HttpReply:
        return reply if request.method == verb else {}

    return lambda: Tamper(http_request=http_request)


def _notification_body(request: HttpRequest) -> HeaderEdits | HttpReply:
    if request.method == "POST" and wire.is_notification(request.body):
        return HttpReply(200, b"{}", CONTENT_TYPE_JSON)
    return {}


def _text_plain(request: HttpRequest, headers: HeaderList) -> HeaderList:
    return [(name, "text/plain; charset=utf-8" if name.lower() == "content-type" and CONTENT_TYPE_JSON in value else value) for name, value in headers]


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(target: dict[str, Any]) -> None:
        target[key] = value

    return edit


def _replace(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(target: dict[str, Any]) -> None:
        if key in target:
            target[key] = value

    return edit


def _pop(key: str) -> Callable[[dict[str, Any]], None]:
    def edit(target: dict[str, Any]) -> None:
        target.pop(key, None)

    return edit


_LIST_METHODS: Final = frozenset(m for m in CACHEABLE_METHODS if m.endswith("/list"))

_ALL: Final[tuple[Defect, ...]] = (
    Defect("no_discover", "server/discover answers -32601 Method not found", False, lambda: Tamper(request=_no_discover)),
    Defect(
        "discover_drops_version",
        f"server/discover lists only {LEGACY_PROTOCOL_VERSION} in supportedVersions",
        False,
        _results(_set("supportedVersions", [LEGACY_PROTOCOL_VERSION]), {"server/discover"}),
    ),
    Defect("no_server_info", "results carry no _meta serverInfo", False, _results(_drop_server_info)),
    Defect("shuffle_tools", "tools/list order changes on every call", False, _rotating({"tools/list": "tools"})),
    Defect("ttl_not_integer", "list results carry ttlMs 1500.5", False, _results(_replace("ttlMs", 1500.5), _LIST_METHODS)),
    Defect(
        "bad_cache_scope",
        'cacheable results carry cacheScope "shared"',
        False,
        _results(_replace("cacheScope", "shared"), CACHEABLE_METHODS),
    ),
    Defect("no_result_type", "results carry no resultType", False, _results(_pop("resultType"))),
    Defect("unknown_result_type", 'results carry resultType "partial"', False, _results(_set("resultType", "partial"))),
    Defect(
        "tool_result_no_content",
        "successful tools/call results have no content array",
        False,
        _results(_strip_content, {"tools/call"}),
    ),
    Defect(
        "invalid_schema",
        'the first tool\'s inputSchema has a property {"type": "strnig"}',
        False,
        _first_tool(lambda tool: _first_property(tool.setdefault("inputSchema", {}), {"type": "strnig"})),
    ),
    Defect(
        "dangling_ref",
        "the first tool's outputSchema $refs #/$defs/DoesNotExist",
        False,
        _first_tool(lambda tool: _first_property(tool.setdefault("outputSchema", {}), {"$ref": "#/$defs/DoesNotExist"})),
    ),
    Defect(
        "input_root_not_object",
        "the first tool's inputSchema root is an array schema",
        False,
        _first_tool(_set("inputSchema", {"type": "array", "items": {"type": "string"}})),
    ),
    Defect(
        "structured_content_mismatch",
        "tools/call structuredContent breaks its outputSchema (a field changes type)",
        False,
        _results(_mismatch_structured_content, {"tools/call"}),
    ),
    Defect(
        "unknown_tool_is_error",
        "an unknown tool gets an isError result, not -32602 (the bare SDK)",
        False,
        lambda: Tamper(keep_sdk_unknown_tool=True),
    ),
    Defect(
        "missing_resource_32002",
        "an unknown resource gets the retired code -32002",
        False,
        _edit_errors(INVALID_PARAMS, _set("code", -32002), "resources/read"),
    ),
    Defect(
        "unsupported_version_no_data",
        "the -32022 error carries no data",
        False,
        _edit_errors(UNSUPPORTED_PROTOCOL_VERSION, _pop("data")),
    ),
    Defect(
        "capability_error_no_data",
        "the -32021 error carries no data",
        False,
        _edit_errors(MISSING_REQUIRED_CLIENT_CAPABILITY, _pop("data")),
    ),
    Defect(
        "retired_header_code",
        "header mismatches answer -32001 instead of -32020",
        True,
        _edit_errors(HEADER_MISMATCH, _set("code", -32001)),
    ),
    Defect(
        "ignore_mcp_method",
        f"the {HEADER_METHOD} header is not checked",
        True,
        _mirror_header(HEADER_METHOD, lambda request: _body_field(request, "method")),
    ),
    Defect("ignore_mcp_name", f"the {HEADER_NAME} header is not checked", True, _mirror_header(HEADER_NAME, _named_value)),
    Defect(
        "no_base64_header_decode",
        f"a base64-encoded {HEADER_NAME} is compared undecoded (refused with -32020)",
        True,
        lambda: Tamper(http_request=_raw_name_compare),
    ),
    Defect(
        "ignore_version_header",
        f"a {HEADER_PROTOCOL_VERSION} / _meta version mismatch is accepted",
        True,
        _mirror_header(HEADER_PROTOCOL_VERSION, lambda request: _body_field(request, "params", "_meta", META_PROTOCOL_VERSION)),
    ),
    Defect("answers_ping", "ping returns {} instead of -32601", False, lambda: Tamper(request=_answering("ping", dict))),
    Defect(
        "answers_initialize",
        "initialize sent with the 2026 _meta returns an InitializeResult (and over HTTP an Mcp-Session-Id)",
        False,
        lambda: Tamper(request=_modern_initialize_answered, http_headers=_session_on_initialize),
    ),
    Defect(
        "dual_era_answers_modern_initialize",
        "dual-era: every initialize, the one sent with the 2026 envelope too, gets an InitializeResult and an Mcp-Session-Id",
        True,  # over stdio an initialize turns a dual-era process legacy, so the suite sends none there
        lambda: Tamper(request=_every_initialize_answered, http_headers=_session_on_every_initialize),
    ),
    Defect(
        "tool_error_no_result_type",
        "a tools/call answered with a tool error result (isError) carries no resultType",
        False,
        lambda: Tamper(response=_drop_result_type_on_tool_errors),
    ),
    Defect(
        "prompt_result_malformed",
        "prompts/get of the second listed prompt answers a message with role 'system' (only user and assistant exist)",
        False,
        lambda: Tamper(response=_malformed_reply_prompt),
    ),
    Defect(
        "initialize_refusal_unnamed",
        "a refused legacy initialize does not name the supported versions",
        False,
        lambda: Tamper(response=_unnamed_initialize_refusal),
    ),
    Defect("answers_logging_set_level", "logging/setLevel returns {}", False, lambda: Tamper(request=_answering("logging/setLevel", dict))),
    Defect("answers_resources_subscribe", "resources/subscribe returns {}", False, lambda: Tamper(request=_answering("resources/subscribe", dict))),
    Defect(
        "hands_out_session_id",
        f"every HTTP response carries an {HEADER_SESSION_ID} header",
        True,
        lambda: Tamper(http_headers=_session_header),
    ),
    Defect(
        "get_allowed",
        "GET answers 200 with an empty SSE stream",
        True,
        _on_http_method("GET", HttpReply(200, b"", "text/event-stream")),
    ),
    Defect("delete_allowed", "DELETE answers 200", True, _on_http_method("DELETE", HttpReply(200))),
    Defect(
        "notification_gets_body",
        "a notification POST answers 200 with a JSON body {}",
        True,
        lambda: Tamper(http_request=_notification_body),
    ),
    Defect("wrong_content_type", "JSON responses are labelled text/plain", True, lambda: Tamper(http_headers=_text_plain)),
    Defect(
        "no_origin_check",
        "a foreign Origin header is accepted",
        True,
        lambda: Tamper(http_request=lambda request: {"origin": None}),
    ),
    Defect(
        "lax_meta",
        "requests missing _meta protocolVersion or clientCapabilities are served",
        False,
        lambda: Tamper(request=_lax_meta),
    ),
    Defect("malformed_tool", "the first tool in tools/list has no inputSchema", False, _first_tool(_pop("inputSchema"))),
    Defect(
        "prompt_errors_internal",
        "prompts/get of an unknown prompt or without a required argument answers -32603 (the bare SDK)",
        False,
        _edit_errors(INVALID_PARAMS, _set("code", -32603), "prompts/get"),
    ),
    Defect("cursor_ignored", "a list request's cursor is ignored (an invalid one is served)", False, lambda: Tamper(request=_strip_cursor)),
    Defect(
        "cursor_loops",
        "tools/list always hands out the same nextCursor, and serves it",
        False,
        lambda: Tamper(request=_strip_cursor, response=_edit_results(_looping_cursor, {"tools/list"})),
    ),
    Defect(
        "completion_without_values",
        "declares completions; completion/complete answers a result without completion",
        False,
        lambda: Tamper(
            request=_answering("completion/complete", lambda: {"resultType": "complete"}),
            response=_edit_results(_declare_completions, {"server/discover"}),
        ),
    ),
    Defect(
        "completion_answered_undeclared",
        "completion/complete answers a result though completions is not declared",
        False,
        lambda: Tamper(request=_answering("completion/complete", lambda: {"completion": {"values": []}, "resultType": "complete"})),
    ),
    Defect("bad_tool_name", "the first tool is named 'get weather, now'", False, _first_tool(_rename_first_tool)),
    Defect("serves_null_id", "a request with id null is served", True, lambda: Tamper(request=_serve_null_id)),
    Defect("serves_malformed_id", "a request whose id is an object or a fraction is served", True, lambda: Tamper(request=_serve_malformed_id)),
    Defect("serves_batches", "stdio: a JSON-RPC batch is answered with a JSON array of responses", False, lambda: Tamper(batch=_answer_batch)),
    Defect(
        "answers_cancellation",
        "stdio: a notifications/cancelled is answered with a -32601 error response",
        False,
        lambda: Tamper(notification=_answer_cancellation),
    ),
    Defect(
        "listen_unacknowledged",
        "subscriptions/listen is answered at once with its closing result, never acknowledged",
        False,
        lambda: Tamper(request=_listen_ends_unacknowledged),
    ),
    Defect("mrtr_retry_refused", "a tools/call retry carrying inputResponses answers -32603", False, lambda: Tamper(request=_refuse_input_responses)),
    Defect(
        "mrtr_completes_without_input",
        "a tools/call retry with requestState but no inputResponses completes as if the input had been given",
        False,
        lambda: Tamper(request=_complete_without_input),
    ),
    Defect(
        "answers_unknown_method",
        "a request for a method no revision defines is answered with an empty result",
        False,
        lambda: Tamper(request=_answer_unknown_methods),
    ),
    Defect("resource_contents_no_uri", "resources/read answers contents without their uri", False, _results(_drop_content_uris, {"resources/read"})),
    Defect(
        "mrtr_asks_undeclared",
        "a tools/call from a client declaring no capability is answered with input requests as if it had declared them all",
        False,
        lambda: Tamper(request=_ask_undeclared),
    ),
    Defect(
        "mrtr_refuses_unrequested_answer",
        "a tools/call retry with more than one answer in inputResponses answers -32602",
        False,
        lambda: Tamper(request=_refuse_unrequested_answers),
    ),
    Defect(
        "mrtr_accepts_invalid_answers",
        "a tools/call retry whose inputResponses are not objects completes",
        False,
        lambda: Tamper(request=_accept_invalid_answers),
    ),
    Defect(
        "progress_foreign_token",
        "a tools/call with a progressToken gets progress notifications for another token",
        True,
        _progress_stream(lambda token: f"not-{token}", (1, 2)),
    ),
    Defect(
        "progress_goes_back",
        "a tools/call with a progressToken gets progress notifications whose progress goes down",
        True,
        _progress_stream(lambda token: token, (2, 1)),
    ),
    Defect(
        "mrtr_second_round_empty",
        "a tools/call retry with inputResponses answers input_required again with neither inputRequests nor requestState",
        False,
        lambda: Tamper(request=_ask_again_empty),
    ),
    Defect("mrtr_prompt_retry_refused", "prompts/get asks for input, then answers its retry with -32603", False, lambda: Tamper(request=_prompt_retry_refused)),
    Defect("crossed_streams", "each tools/list is answered with the previous tools/list's id", False, _crossed_ids),
)

DEFECTS: Final[dict[str, Defect]] = {defect.name: defect for defect in _ALL}
