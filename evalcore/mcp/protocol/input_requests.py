"""Protocol layer: the pure rules of multi round-trip requests (MRTR, SEP-2322; spec/basic/patterns/mrtr.mdx).

A `tools/call`, `prompts/get` or `resources/read` may answer
`resultType: "input_required"` with `inputRequests` (a map of
`elicitation/create`, `sampling/createMessage` or `roots/list` requests) and/or
an opaque `requestState`. The client answers every request and retries the
ORIGINAL request under a new id with `inputResponses` (same keys) and the exact
`requestState`. This module reads such a result, validates each request against
the official wire models (`mcp-types`, through their JSON Schema in
`wire_shapes`: building the pydantic models would cost a run a few hundred ms
of CPU) and the client's declared capabilities, and builds the retry's params.
No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from evalcore.mcp.protocol.constants import INPUT_REQUIRED_METHODS
from evalcore.records import InputMethod, InputRequest

INPUT_METHODS: Final[tuple[InputMethod, ...]] = ("elicitation/create", "sampling/createMessage", "roots/list")
# The official wire model of each request, by its name in wire_shapes.schema.json.
_MODELS: Final[dict[str, str]] = {"elicitation/create": "ElicitRequest", "sampling/createMessage": "CreateMessageRequest", "roots/list": "ListRootsRequest"}
# The client capability each input request needs (spec: a server MUST NOT send one the client did not declare).
_CAPABILITY: Final[dict[str, str]] = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
RETRY_KEYS: Final = ("inputResponses", "requestState")


class InputRequestProblem(ValueError):
    """An `input_required` result the client cannot act on; the message says what the server sent wrong."""


@dataclass(frozen=True)
class InputRequired:
    """A parsed `input_required` result."""

    requests: tuple[InputRequest, ...]
    request_state: str | None  # opaque: echoed exactly, never inspected


def is_input_required(result: Mapping[str, Any] | None) -> bool:
    return isinstance(result, Mapping) and result.get("resultType") == "input_required"


def parse_input_required(method: str, result: Mapping[str, Any], client_capabilities: Mapping[str, Any]) -> InputRequired:
    """Validate an `input_required` result of `method`; raises `InputRequestProblem` naming what is wrong."""
    if method not in INPUT_REQUIRED_METHODS:
        raise InputRequestProblem(f"{method} answered input_required; only {', '.join(sorted(INPUT_REQUIRED_METHODS))} may")
    raw_requests = result.get("inputRequests")
    state = result.get("requestState")
    if raw_requests is None and state is None:
        raise InputRequestProblem("input_required result carries neither inputRequests nor requestState (the server MUST send at least one)")
    if state is not None and not isinstance(state, str):
        raise InputRequestProblem(f"requestState must be a string, got {type(state).__name__}")
    if raw_requests is not None and not isinstance(raw_requests, Mapping):
        raise InputRequestProblem(f"inputRequests must be an object keyed by request id, got {type(raw_requests).__name__}")
    requests = tuple(_input_request(str(key), value, client_capabilities) for key, value in (raw_requests or {}).items())
    return InputRequired(requests, state)


def _input_request(key: str, value: Any, client_capabilities: Mapping[str, Any]) -> InputRequest:
    if not isinstance(value, Mapping):
        raise InputRequestProblem(f"inputRequests[{key!r}] is not a request object")
    method = value.get("method")
    if method not in _MODELS:
        raise InputRequestProblem(f"inputRequests[{key!r}] asks for {method!r}; an input request is one of {', '.join(INPUT_METHODS)}")
    from evalcore.mcp.protocol.wire_shapes import model_problem  # jsonschema: imported by the first input request, not by every run

    problem = model_problem(_MODELS[method], value)
    if problem is not None:
        raise InputRequestProblem(f"inputRequests[{key!r}] ({method}) is malformed: {problem}")
    capability = _CAPABILITY[method]
    if capability not in client_capabilities:
        raise InputRequestProblem(f"inputRequests[{key!r}] asks for {method}, but the client did not declare the {capability!r} capability")
    params = value.get("params") or {}
    if method == "elicitation/create" and params.get("mode") == "url" and "url" not in (client_capabilities.get("elicitation") or {}):
        raise InputRequestProblem(f"inputRequests[{key!r}] is a URL-mode elicitation, but the client declared only form mode")
    return InputRequest(key, method, params)


def retry_params(original: Mapping[str, Any], answers: Mapping[str, Mapping[str, Any]], request_state: str | None) -> dict[str, Any]:
    """The original params with `inputResponses` and the echoed `requestState` (left out when the server sent none)."""
    params = {key: value for key, value in original.items() if key not in RETRY_KEYS and key != "_meta"}
    if answers:
        params["inputResponses"] = {key: dict(value) for key, value in answers.items()}
    if request_state is not None:
        params["requestState"] = request_state
    return params
