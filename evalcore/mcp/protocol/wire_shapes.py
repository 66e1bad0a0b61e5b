"""Protocol layer: validate messages against the official 2026-07-28 wire models (`mcp-types`).

The SDK's generated models are the reference for shapes; evalcore's own checks
add what the models tolerate (e.g. unknown `resultType` values).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any, get_args

import pydantic
from mcp_types import jsonrpc
from mcp_types.methods import SERVER_RESULTS, validate_server_result

from evalcore.mcp.protocol.constants import PROTOCOL_VERSION


def envelope_problem(message: Mapping[str, Any]) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 response, error or notification; None if it is one."""
    if "result" in message:
        model: type[pydantic.BaseModel] = jsonrpc.JSONRPCResponse
    elif "error" in message:
        model = jsonrpc.JSONRPCError
    elif "method" in message:
        model = jsonrpc.JSONRPCRequest if "id" in message else jsonrpc.JSONRPCNotification
    else:
        return "neither result, error nor method"
    try:
        model.model_validate(dict(message))
    except pydantic.ValidationError as exc:
        return _first_error(exc)
    if "result" in message and "error" in message:
        return "carries both result and error"
    return None


def result_problem(method: str, result: Mapping[str, Any]) -> str | None:
    """Why `result` is not a valid 2026-07-28 result of `method`; None if valid or if the method has no official model."""
    try:
        validate_server_result(method, PROTOCOL_VERSION, dict(result))
    except KeyError:
        return None
    except pydantic.ValidationError as exc:
        return _first_error(exc)
    return None


def result_model_problem(method: str, result: Mapping[str, Any]) -> str | None:
    """Why `result` is not the official model its own `resultType` names (InputRequiredResult for "input_required",
    else the method's complete result); None if valid or if the method has no official model.

    Stricter than `result_problem`: the surface union accepts a malformed complete result as a lenient
    InputRequiredResult, so a GetPromptResult whose messages have no content would pass there.
    """
    surface = SERVER_RESULTS.get((method, PROTOCOL_VERSION))
    if surface is None:
        return None
    members = get_args(surface) if isinstance(surface, types.UnionType) else (surface,)
    input_required = result.get("resultType") == "input_required"
    model = next((m for m in members if (m.__name__ == "InputRequiredResult") == input_required), None)
    if model is None:
        return f"resultType {result.get('resultType')!r} is not a result {method} may give"
    try:
        model.model_validate(dict(result), by_name=False)
    except pydantic.ValidationError as exc:
        return _first_error(exc)
    return None


def _first_error(exc: pydantic.ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "(root)"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}"
