"""Protocol layer: validate messages against the official 2026-07-28 wire models (`mcp-types`).

The SDK's generated models are the reference for shapes; evalcore's own checks
add what the models tolerate (e.g. unknown `resultType` values).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic
from mcp_types import jsonrpc
from mcp_types.methods import validate_server_result

from evalcore.protocol.constants import PROTOCOL_VERSION


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


def _first_error(exc: pydantic.ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "(root)"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}"
