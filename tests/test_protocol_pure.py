"""Pure protocol helpers: header encoding, request envelopes, trace context, SSE decoding, schemas."""

from __future__ import annotations

import pytest

from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.envelope import (
    build_meta,
    build_notification,
    build_request,
    decode_header_value,
    encode_header_value,
    standard_headers,
)
from evalcore.mcp.protocol.schemas import example_arguments, instance_errors, schema_errors, unresolvable_refs
from evalcore.mcp.protocol.tracecontext import is_valid_traceparent, new_traceparent
from evalcore.mcp.transport.sse import SseDecoder


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_header_value_encoding_matches_the_spec_table(value, encoded):
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


def test_malformed_sentinel_decodes_to_none():
    assert decode_header_value("=?base64?***?=") is None


def test_request_envelope_and_headers():
    meta = build_meta(client_info={"name": "x", "version": "1"}, traceparent=new_traceparent())
    request = build_request("tools/call", {"name": "get_weather", "arguments": {}}, 7, meta)
    assert request["jsonrpc"] == "2.0" and request["id"] == 7
    assert request["params"]["_meta"][c.META_PROTOCOL_VERSION] == c.PROTOCOL_VERSION
    headers = standard_headers(request)
    assert headers[c.HEADER_METHOD] == "tools/call"
    assert headers[c.HEADER_NAME] == "get_weather"
    assert headers[c.HEADER_PROTOCOL_VERSION] == c.PROTOCOL_VERSION
    assert c.HEADER_NAME not in standard_headers(build_request("tools/list", None, 1, meta))
    read = build_request("resources/read", {"uri": "kb://ünï"}, 2, meta)
    assert standard_headers(read)[c.HEADER_NAME].startswith("=?base64?")
    assert "id" not in build_notification("notifications/cancelled", {"requestId": 1}, meta)
    assert "_meta" not in build_request("tools/list", None, 3, None)["params"]


def test_traceparent_is_w3c_shaped_and_fresh():
    first, second = new_traceparent(), new_traceparent()
    assert is_valid_traceparent(first) and first != second
    assert not is_valid_traceparent("00-" + "0" * 32 + "-" + "1" * 16 + "-01")


def test_sse_decoder_handles_split_chunks_crlf_comments_and_multiline_data():
    decoder = SseDecoder()
    events = decoder.feed('data: {"a":\r')
    events += decoder.feed("\ndata: 1}\r\n\r")
    events += decoder.feed("\n: comment\n\nevent: custom\ndata: x\n\n")
    assert [(e.event, e.data) for e in events] == [("message", '{"a":\n1}'), ("custom", "x")]


SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "examples": ["Oslo"]},
        "units": {"$ref": "#/$defs/Units"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "when": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        "optional": {"type": "string"},
    },
    "required": ["city", "units", "days", "when", "tags"],
    "$defs": {"Units": {"enum": ["celsius", "fahrenheit"]}},
}


def test_example_arguments_satisfy_their_schema():
    arguments = example_arguments(SCHEMA)
    assert arguments == {"city": "Oslo", "units": "celsius", "days": 1, "when": "2026-01-15", "tags": ["example", "example"]}
    assert instance_errors(arguments, SCHEMA) == []


def test_schema_problems_are_named():
    assert schema_errors(SCHEMA) == []
    assert schema_errors({"type": "strnig"})
    assert schema_errors({"type": "object", "required": "city"})
    assert unresolvable_refs(SCHEMA) == []
    assert "does not resolve" in unresolvable_refs({"$ref": "#/$defs/Missing"})[0]
    assert "outside the document" in unresolvable_refs({"$ref": "https://example.com/s.json"})[0]
    assert instance_errors({"city": 3}, SCHEMA)


def test_x_mcp_header_parameters_are_mirrored_and_encoded():
    from evalcore.mcp.protocol.envelope import param_headers

    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "opts": {"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
            "note": {"type": "string"},
            "items": {"type": "array", "items": {"type": "string", "x-mcp-header": "Never"}},
        },
    }
    arguments = {"region": "Zürich", "dry": False, "opts": {"tenant": 42}, "note": "x", "items": ["a"]}
    assert param_headers(schema, arguments) == {"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=", "Mcp-Param-Dry-Run": "false", "Mcp-Param-Tenant": "42"}
    assert param_headers(schema, {"region": None}) == {}
