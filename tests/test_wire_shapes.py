"""The wire-shape validation: its JSON Schema is the pinned official models', and it judges messages as they do."""

from __future__ import annotations

from typing import Any

import pytest

from evalcore.mcp.protocol import wire_schema
from evalcore.mcp.protocol.wire_shapes import envelope_problem, result_model_problem, result_problem

TOOL = {"name": "lookup", "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}
LIST_TOOLS = {"tools": [TOOL], "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}
PROMPT = {"resultType": "complete", "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}]}
INPUT_REQUIRED = {"resultType": "input_required", "requestState": "opaque"}


def test_the_schema_file_is_what_the_pinned_models_give():
    """Regenerate with `python -m evalcore.mcp.protocol.wire_schema` after changing the mcp-types pin."""
    assert wire_schema.SCHEMA_PATH.read_text(encoding="utf-8") == wire_schema.render(wire_schema.wire_schema())


def official_model_accepts(method: str, result: dict[str, Any]) -> bool:
    from mcp_types.methods import validate_server_result
    from pydantic import ValidationError

    try:
        validate_server_result(method, "2026-07-28", result)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("method", "result", "problem"),
    [
        ("tools/list", LIST_TOOLS, None),
        ("tools/list", {**LIST_TOOLS, "tools": [{"name": "lookup"}]}, "inputSchema' is a required property"),
        ("tools/list", {**LIST_TOOLS, "tools": [{**TOOL, "inputSchema": {"type": "array"}}]}, "tools.0.inputSchema.type: 'object' was expected"),
        ("prompts/get", PROMPT, None),
        ("prompts/get", INPUT_REQUIRED, None),
        ("tools/call", {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}, None),
        # The official surface union's InputRequiredResult is lenient enough to take this too (see the next test).
        ("tools/call", {"resultType": "complete", "content": [{"type": "text"}]}, None),
        ("server/discover", {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "complete"}, "is a required property"),
        ("vendor/unknown", {"anything": 1}, None),  # no official model: nothing to judge
    ],
)
def test_results_are_judged_as_the_official_models_judge_them(method, result, problem):
    found = result_problem(method, result)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found, found
    if method != "vendor/unknown":
        assert official_model_accepts(method, result) == (found is None)


def test_a_result_is_held_to_the_model_its_result_type_names():
    """The surface union would let a broken complete result pass as a lenient InputRequiredResult."""
    broken = {"resultType": "complete", "messages": [{"role": "system", "content": {"type": "text", "text": "Hi"}}]}
    assert result_model_problem("prompts/get", PROMPT) is None
    assert result_model_problem("prompts/get", INPUT_REQUIRED) is None
    assert result_model_problem("prompts/get", broken) == "messages.0.role: 'system' is not one of ['assistant', 'user']"
    assert result_model_problem("tools/call", {"resultType": "complete", "content": [{"type": "text"}]}) == "content.0: 'text' is a required property"
    assert result_model_problem("server/discover", INPUT_REQUIRED) == "resultType 'input_required' is not a result server/discover may give"


def test_json_types_are_not_coerced():
    """A string where the schema says integer is wrong on the wire, though pydantic's lax mode would convert it."""
    assert "ttlMs: '5' is not of type 'integer'" in (result_problem("tools/list", {**LIST_TOOLS, "ttlMs": "5"}) or "")


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, None),
        ({"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "Method not found"}}, None),
        ({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}, None),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}, "carries both result and error"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "jsonrpc: '2.0' was expected"),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, "id: None is not valid under any of the given schemas"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "error.code: 'x' is not of type 'integer'"),
        ({"jsonrpc": "2.0"}, "neither result, error nor method"),
    ],
)
def test_envelopes(message, problem):
    assert envelope_problem(message) == problem


def test_a_long_offending_value_is_cut():
    found = envelope_problem({"jsonrpc": "2.0", "id": ["x" * 5000], "result": {}})
    assert found is not None and len(found) < 400


def test_a_result_too_large_to_remember_is_still_judged():
    many = [{**TOOL, "name": f"tool-{n}", "description": "x" * 200} for n in range(1000)]
    assert result_problem("tools/list", {**LIST_TOOLS, "tools": many}) is None
    broken = {**LIST_TOOLS, "tools": [*many, {"name": "no-schema"}]}
    assert "tools.1000: 'inputSchema' is a required property" in (result_problem("tools/list", broken) or "")
