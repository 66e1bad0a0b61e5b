"""The HTTP transport and client against hostile servers: every misbehaviour is a bounded WireFailure."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from evalcore.mcp.client import McpClient
from evalcore.mcp.transport.base import Limits
from evalcore.mcp.transport.http import HttpTransport
from tests.hostile_http import HostileHandler, hostile_server

FAST = Limits(connect_timeout=1.0, read_timeout=1.5, max_response_bytes=1_000_000, max_sse_events=100, max_stream_retries=2)

# For paths that do answer: the wait ends at the answer, so room for a busy machine costs nothing.
ROOMY = replace(FAST, connect_timeout=60.0, read_timeout=60.0)
TIMES_OUT = ("/hang", "/slow-drip", "/held-open-json")


@pytest.fixture(scope="module")
def base_url():
    with hostile_server() as url:
        yield url


def _call(url: str):
    limits = FAST if url.endswith(TIMES_OUT) else ROOMY

    async def go():
        client = McpClient(HttpTransport(url, limits), limits=limits)
        try:
            return await client.request("tools/list")
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("path", "kind", "reason"),
    [
        ("/hang", "timeout", f"ReadTimeout after {FAST.read_timeout:g}s"),
        ("/slow-drip", "timeout", f"no complete answer within {FAST.read_timeout:g}s"),  # keep-alives do not extend it
        ("/garbage", "bad_json", "HTTP 200 body is not JSON"),
        ("/nested", "bad_json", "HTTP 200 body nests JSON too deep to decode"),
        ("/nested-sse", "bad_json", "SSE event 1 nests JSON too deep to decode"),
        ("/huge", "too_large", f"answer exceeds {FAST.max_response_bytes} bytes"),
        ("/flood", "too_many_events", f"SSE stream exceeds {FAST.max_sse_events} events"),
        ("/cut", "stream_cut", "connection closed mid-answer"),
    ],
)
def test_hostile_answers_become_bounded_failures(base_url, path, kind, reason):
    """Bounded by construction: each failure names the limit that ended it (a timeout, a byte or event cap, the cut
    after its bounded re-issues). A transport that stopped enforcing one ends another way, or hangs into pytest's timeout."""
    exchange = _call(base_url + path)
    assert exchange.failure is not None, exchange.describe()
    assert exchange.failure.kind == kind, str(exchange.failure)
    assert exchange.failure.detail.startswith(reason), exchange.failure.detail
    assert exchange.result is None
    assert len(exchange.request_ids) == (FAST.max_stream_retries + 1 if kind == "stream_cut" else 1)  # only a cut is re-issued


def test_cut_stream_is_reissued_with_a_new_id(base_url):
    HostileHandler.cut_once_seen.clear()
    HostileHandler.seen_ids.clear()
    exchange = _call(base_url + "/cut-once")
    assert exchange.failure is None, str(exchange.failure)
    assert exchange.result == {"ok": True}
    assert len(exchange.request_ids) == 2
    assert exchange.request_ids[0] != exchange.request_ids[1]
    assert HostileHandler.seen_ids[-2:] == list(exchange.request_ids)


def test_cut_stream_retries_are_bounded(base_url):
    HostileHandler.seen_ids.clear()
    exchange = _call(base_url + "/cut")
    assert exchange.failure is not None and exchange.failure.kind == "stream_cut"
    assert len(exchange.request_ids) == FAST.max_stream_retries + 1
    assert len(set(HostileHandler.seen_ids)) == FAST.max_stream_retries + 1


def test_sse_answer_with_crlf_multiline_events_and_comments(base_url):
    exchange = _call(base_url + "/sse-ok")
    assert exchange.failure is None, str(exchange.failure)
    assert exchange.result == {"ok": True}
    assert exchange.wire.messages[0]["method"] == "notifications/progress"
    assert exchange.wire.sse_events == 2


def test_mislabelled_json_is_still_read_and_the_label_kept(base_url):
    exchange = _call(base_url + "/text")
    assert exchange.result == {"ok": True}
    assert exchange.header("content-type") == "text/plain"


def test_connection_refused_is_a_connect_failure():
    """Refused at once: one attempt, no re-issue, and the reason says it could not connect (not a timeout)."""
    exchange = _call("http://127.0.0.1:9/mcp")
    assert exchange.failure is not None and exchange.failure.kind == "connect"
    assert exchange.failure.detail.startswith("cannot connect to http://127.0.0.1:9/mcp") and len(exchange.request_ids) == 1


def test_every_request_carries_the_2026_headers_and_meta(base_url):
    exchange = _call(base_url + "/sse-ok")
    headers = {k.lower(): v for k, v in exchange.request_headers.items()}
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert headers["mcp-method"] == "tools/list"
    assert "application/json" in headers["accept"] and "text/event-stream" in headers["accept"]
    meta = exchange.request["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "evalcore"
    assert meta["traceparent"].startswith("00-")


def test_a_get_answered_with_an_endless_event_stream_costs_one_short_read(base_url):
    async def go():
        transport = HttpTransport(base_url + "/endless-get", FAST)
        try:
            return await transport.send(b"", headers={"Accept": "text/event-stream"}, expect_id=None, http_method="GET")
        finally:
            await transport.aclose()

    wire = asyncio.run(go())
    assert wire.status == 200 and wire.failure is None  # the status line is the answer; the stream is not read to a timeout


def test_a_bare_json_line_in_a_held_open_json_body_is_named_and_quoted(base_url):
    """The acknowledgment was sent, framed wrong: the reason says so and quotes it, not just "ReadTimeout"."""
    exchange = _call(base_url + "/held-open-json")
    assert exchange.failure is not None and exchange.failure.kind == "timeout"
    detail = exchange.failure.detail
    assert "HTTP 200 application/json sent" in detail and "held the body open: a bare JSON line" in detail
    assert "neither a complete JSON response" in detail and "nor an SSE stream" in detail
    assert "notifications/subscriptions/acknowledged" in detail


def test_a_stream_that_times_out_says_what_it_sent(base_url):
    exchange = _call(base_url + "/slow-drip")
    assert exchange.failure is not None
    assert "text/event-stream sent" in exchange.failure.detail and "b': keep-alive" in exchange.failure.detail
