"""Orchestration support: the spans of a behaviour attempt, their names and attributes.

One trace per attempt:

    attempt <case id>                  root (INTERNAL)
    ├── chat <model>                   each model call (CLIENT), GenAI semantic conventions
    ├── tools/call <tool>              each MCP request (CLIENT), MCP semantic conventions;
    │   └── tools/call <tool>          the server's span, parented through `_meta.traceparent`
    └── ...

Attribute names follow the OpenTelemetry GenAI and MCP conventions where they
exist (`gen_ai.*`, `mcp.method.name`, `jsonrpc.request.id`, `error.type`, the
same names the `mcp` SDK's server span uses); evalcore's own are `evalcore.*`.
The attribute builders are pure; the context managers use the run's tracer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.trace import Span, SpanKind, StatusCode

from evalcore.models.types import ModelSpec, ModelTurn, ToolCall
from evalcore.records import ToolExecution
from evalcore.redaction import clip
from evalcore.telemetry.setup import run_tracer

Attributes = dict[str, Any]


def attempt_attributes(model: ModelSpec, case_id: str, attempt: int) -> Attributes:
    return {"evalcore.case.id": case_id, "evalcore.model": model.name, "evalcore.attempt": attempt, "evalcore.simulated": model.simulated}


def attempt_outcome_attributes(*, passed: bool, stop_reason: str, fault: str | None = None) -> Attributes:
    """How the attempt ended; `fault` is the fault or attack the case injected (Layer 2), when it did."""
    attributes: Attributes = {"evalcore.passed": passed, "evalcore.stop_reason": stop_reason}
    if fault is not None:
        attributes["evalcore.fault"] = fault
    return attributes


def model_call_attributes(model: ModelSpec) -> Attributes:
    provider, _, _ = model.name.partition("/")
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": model.name, "gen_ai.provider.name": provider}


def model_turn_attributes(turn: ModelTurn) -> Attributes:
    """What one model response cost: tokens, USD (only when the price is known), retries, finish reason."""
    attributes: Attributes = {"evalcore.retries": turn.retries, "evalcore.tool_calls": len(turn.tool_calls)}
    optional = {
        "gen_ai.response.model": turn.model_version,
        "gen_ai.usage.input_tokens": turn.input_tokens,
        "gen_ai.usage.output_tokens": turn.output_tokens,
        "evalcore.cost_usd": turn.cost_usd,
    }
    attributes.update({key: value for key, value in optional.items() if value is not None})
    if turn.finish_reason:
        attributes["gen_ai.response.finish_reasons"] = (turn.finish_reason,)
    return attributes


def tool_call_attributes(call: ToolCall) -> Attributes:
    return {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id}


def tool_execution_attributes(execution: ToolExecution) -> Attributes:
    """The request id(s) the call went out with (a re-issue after a cut stream gets a new id), and how it failed."""
    attributes: Attributes = {"evalcore.retries": max(0, len(execution.request_ids) - 1)}
    if execution.request_ids:
        attributes["jsonrpc.request.id"] = str(execution.request_ids[-1])
    if execution.error_type is not None:
        attributes["error.type"] = execution.error_type
    return attributes  # the injected fault is known only from the proxy's log afterwards: it goes on the attempt span


@contextlib.contextmanager
def attempt_span(model: ModelSpec, case_id: str, attempt: int) -> Iterator[Span]:
    """The root of an attempt's trace; never a child of whatever span happens to be current."""
    tracer = run_tracer()
    with tracer.start_as_current_span(
        f"attempt {case_id}", context=otel_context.Context(), kind=SpanKind.INTERNAL, attributes=attempt_attributes(model, case_id, attempt)
    ) as span:
        yield span


@contextlib.contextmanager
def model_call_span(model: ModelSpec) -> Iterator[Span]:
    with run_tracer().start_as_current_span(f"chat {model.name}", kind=SpanKind.CLIENT, attributes=model_call_attributes(model)) as span:
        try:
            yield span
        except Exception as exc:  # recorded on the span (the tracer sets the status), then re-raised
            span.set_attribute("error.type", type(exc).__name__)
            raise


@contextlib.contextmanager
def tool_call_span(call: ToolCall) -> Iterator[Span]:
    """Current while the request is sent, so the client puts this span's context into `_meta.traceparent`."""
    with run_tracer().start_as_current_span(f"tools/call {call.name}", kind=SpanKind.CLIENT, attributes=tool_call_attributes(call)) as span:
        yield span


def record_model_turn(span: Span, turn: ModelTurn) -> None:
    span.set_attributes(model_turn_attributes(turn))


def record_tool_execution(span: Span, execution: ToolExecution) -> None:
    span.set_attributes(tool_execution_attributes(execution))
    if execution.is_error:
        span.set_status(StatusCode.ERROR, clip(execution.error or "the tool reported isError", 200))
