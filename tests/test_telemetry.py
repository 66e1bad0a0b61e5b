"""Layer 3: one trace per attempt, model and MCP spans under it, the server's spans joined through `_meta.traceparent`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace.span import TraceState

from evalcore.cli import main
from evalcore.mcp.client import McpClient
from evalcore.mcp.protocol.tracecontext import is_valid_traceparent
from evalcore.mcp.reference import running_reference_server
from evalcore.store.behaviour import list_runs, load_attempts
from evalcore.telemetry import export, setup
from evalcore.telemetry.setup import otlp_endpoint, otlp_exporter, run_tracer, tracing
from tests.builders import GOLDEN
from tests.otlp_collector import OtlpCollector

SCRIPT = """\
defaults: {latency_ms: 0, tokens: {input: 100, output: 20}, model_version: script-v1}
cases:
  weather-paris:
    calls: [{name: get_weather, args: {city: Paris}}]
    text: "Cloudy in Paris."
  say-hello:
    no_call: true
    text: "Hello!"
  customer-then-ticket:
    calls:
      - {name: get_customer, args: {customer_id: CUST-1001}}
      - {name: create_support_ticket, args: {customer_id: CUST-1001, subject: Invoice download broken, description: The PDF download fails.}}
    text: "Opened a ticket."
"""
RUNS = 2
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED")


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(SCRIPT)
    return tmp_path


def _run(workspace: Path, url: str) -> list[dict]:
    model = f"sim/script:{workspace / 'script.yaml'}"
    db, out = workspace / "evals.duckdb", workspace / "report.json"
    code = main(["run", "--golden", str(workspace / "tasks.yaml"), "--models", model, "--url", url, "--db", str(db), "--runs", str(RUNS), "--out", str(out)])
    assert code == 0
    return load_attempts(db, list_runs(db)[0]["run_id"])


def _turns_and_calls(rows: list[dict]) -> dict[tuple[str, int], tuple[int, list[str]]]:
    """Per (case, attempt): how many model turns and which tools the stored transcript shows."""
    out = {}
    for row in rows:
        transcript = json.loads(row["transcript_json"])
        out[(row["case_id"], row["attempt"])] = (len(transcript["turns"]), [e["tool"] for e in transcript["executions"]])
    return out


def test_span_tree_of_each_attempt(workspace, reference_url, capsys):
    exporter = InMemorySpanExporter()
    with tracing(exporter):
        rows = _run(workspace, reference_url)
    spans = exporter.get_finished_spans()
    by_trace: dict[int, list] = {}
    for span in spans:
        by_trace.setdefault(span.context.trace_id, []).append(span)
    expected = _turns_and_calls(rows)
    assert len(by_trace) == len(expected) == 3 * RUNS  # one trace per attempt, nothing else traced
    for trace_spans in by_trace.values():
        roots = [s for s in trace_spans if s.parent is None]
        assert len(roots) == 1
        root = roots[0]
        key = (root.attributes["evalcore.case.id"], root.attributes["evalcore.attempt"])
        assert root.name == f"attempt {key[0]}" and root.kind == trace.SpanKind.INTERNAL
        assert root.attributes["evalcore.simulated"] is True and root.attributes["evalcore.passed"] is True
        children = [s for s in trace_spans if s is not root]
        assert all(s.parent.span_id == root.context.span_id for s in children)  # flat: model calls and MCP requests
        chats = [s for s in children if s.name.startswith("chat ")]
        tool_calls = [s for s in children if s.name.startswith("tools/call ")]
        turns, tools = expected[key]
        assert len(chats) == turns and len(chats) + len(tool_calls) == len(children)
        assert [s.attributes["gen_ai.tool.name"] for s in sorted(tool_calls, key=lambda s: s.start_time)] == tools
        for chat in chats:
            assert chat.kind == trace.SpanKind.CLIENT
            assert chat.attributes["gen_ai.operation.name"] == "chat"
            assert chat.attributes["gen_ai.request.model"].startswith("sim/script:")
            assert chat.attributes["gen_ai.usage.input_tokens"] == 100 and chat.attributes["gen_ai.usage.output_tokens"] == 20
            assert chat.attributes["evalcore.retries"] == 0
        for call in tool_calls:
            assert call.kind == trace.SpanKind.CLIENT and call.attributes["mcp.method.name"] == "tools/call"
            assert call.attributes["jsonrpc.request.id"] and "error.type" not in call.attributes
    stored = json.loads(rows[0]["transcript_json"])["executions"]
    assert all(e["request_ids"] and e["fault"] is None for e in stored)
    report = json.loads((workspace / "report.json").read_text())  # the report counts the same calls the spans show
    assert report["models"][0]["modelCalls"]["calls"] == sum(1 for s in spans if s.name.startswith("chat "))
    assert report["models"][0]["modelCalls"]["mean_input_tokens"] == 100
    tool_calls = {t["tool"]: t["calls"] for t in report["toolCalls"]}
    assert tool_calls == dict(Counter(s.attributes["gen_ai.tool.name"] for s in spans if s.name.startswith("tools/call ")))


def test_request_meta_carries_the_active_span(workspace):
    exporter = InMemorySpanExporter()
    client = McpClient(transport=None)  # type: ignore[arg-type]  # meta() never touches the transport
    with tracing(exporter), run_tracer().start_as_current_span("tools/call x") as span:
        ctx = span.get_span_context()
        meta = client.meta()
    assert meta["traceparent"] == f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{ctx.trace_flags:02x}"
    assert "tracestate" not in meta  # the span has none
    vendor_state = trace.NonRecordingSpan(trace.SpanContext(ctx.trace_id, ctx.span_id, True, trace.TraceFlags(1), TraceState([("vendor", "v1")])))
    with trace.use_span(vendor_state):
        assert client.meta()["tracestate"] == "vendor=v1"  # tracestate travels with the traceparent
    outside = client.meta()["traceparent"]
    assert is_valid_traceparent(outside) and f"{ctx.trace_id:032x}" not in outside  # no span: a trace of its own


def test_without_an_endpoint_nothing_is_exported(workspace, reference_url, monkeypatch, capsys):
    assert otlp_endpoint() is None and otlp_exporter() is None
    assert otlp_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}) is None
    with tracing():
        assert isinstance(run_tracer(), trace.NoOpTracer)  # no provider, no exporter, no spans
    assert setup._run_tracer.get() is None
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)  # the global provider stays untouched

    def no_provider(*args: object, **kwargs: object) -> None:
        raise AssertionError("a tracer provider was built with no endpoint configured")

    monkeypatch.setattr(export, "build_provider", no_provider)
    _run(workspace, reference_url)  # a whole run builds none, and still works


def test_spans_line_up_with_the_mcp_servers_over_otlp(workspace, monkeypatch, capsys):
    with OtlpCollector() as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
        with running_reference_server() as url:  # inherits the endpoint: the server exports too
            rows = _run(workspace, url)
        # Both processes flushed on shutdown: the run when it finished, the server when it stopped.
        spans = list(collector.spans)
    ours = [s for s in spans if s.service == "evalcore"]
    theirs = [s for s in spans if s.service == "evalcore-demo-support-desk"]
    roots = [s for s in ours if s.name.startswith("attempt ")]
    assert len(roots) == len({s.trace_id for s in ours}) == len(rows) == 3 * RUNS
    root_ids = {s.span_id for s in roots}
    assert all(s.parent_span_id in root_ids for s in ours if s not in roots)
    client_calls = {s.span_id: s for s in ours if s.name.startswith("tools/call ")}
    server_calls = [s for s in theirs if s.name.startswith("tools/call ")]
    assert client_calls and len(server_calls) == len(client_calls)
    for server_span in server_calls:
        parent = client_calls[server_span.parent_span_id]  # the server's span is the client's MCP request span's child
        assert server_span.trace_id == parent.trace_id
        assert server_span.attributes["gen_ai.tool.name"] == parent.attributes["gen_ai.tool.name"]
        assert server_span.attributes["jsonrpc.request.id"] == parent.attributes["jsonrpc.request.id"]
    assert Counter(s.parent_span_id for s in server_calls) == Counter(client_calls.keys())


def test_a_faulted_attempt_is_one_trace_marked_with_its_fault(tmp_path, reference_url, monkeypatch):
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "tasks.yaml").write_text(
        "cases:\n  - id: weather-500-retry\n    prompt: What's the weather in Paris?\n    expect_tool: get_weather\n    expect_args: {city: Paris}\n"
        "    inject: {fault: http_500, tool: get_weather, expect: retry}\n"
    )
    (tmp_path / "script.yaml").write_text(
        "cases:\n  weather-500-retry:\n    calls: [{name: get_weather, args: {city: Paris}}, {name: get_weather, args: {city: Paris}}]\n    text: Sunny.\n"
    )
    exporter = InMemorySpanExporter()
    with tracing(exporter):
        rows = _run(tmp_path, reference_url)
    (row,) = [r for r in rows if r["attempt"] == 1]
    spans = exporter.get_finished_spans()
    root = next(s for s in spans if s.parent is None and s.attributes["evalcore.attempt"] == 1)
    assert root.attributes["evalcore.fault"] == "http_500"
    calls = sorted((s for s in spans if s.context.trace_id == root.context.trace_id and s.name == "tools/call get_weather"), key=lambda s: s.start_time)
    assert len(calls) == 2 and "error.type" in calls[0].attributes and "error.type" not in calls[1].attributes  # the injected failure, then the retry
    assert [e["fault"] for e in json.loads(row["transcript_json"])["executions"]] == ["http_500", None]
