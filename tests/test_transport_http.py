"""The HTTP transport and client against hostile servers: every misbehaviour is a bounded WireFailure."""

from __future__ import annotations

import asyncio
import time

import pytest

from evalcore.client import McpClient
from evalcore.transport.base import Limits
from evalcore.transport.http import HttpTransport
from tests.hostile_http import HostileHandler, hostile_server

FAST = Limits(connect_timeout=1.0, read_timeout=1.5, max_response_bytes=1_000_000, max_sse_events=100, max_stream_retries=2)


@pytest.fixture(scope="module")
def base_url():
    with hostile_server() as url:
        yield url


def _call(url: str, limits: Limits = FAST):
    async def go():
        client = McpClient(HttpTransport(url, limits), limits=limits)
        try:
            return await client.request("tools/list")
        finally:
            await client.aclose()

    started = time.perf_counter()
    exchange = asyncio.run(go())
    return exchange, time.perf_counter() - started


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/hang", "timeout"),
        ("/slow-drip", "timeout"),
        ("/garbage", "bad_json"),
        ("/nested", "bad_json"),
        ("/nested-sse", "bad_json"),
        ("/huge", "too_large"),
        ("/flood", "too_many_events"),
        ("/cut", "stream_cut"),
    ],
)
def test_hostile_answers_become_bounded_failures(base_url, path, kind):
    exchange, elapsed = _call(base_url + path)
    assert exchange.failure is not None, exchange.describe()
    assert exchange.failure.kind == kind, str(exchange.failure)
    assert exchange.result is None
    # bounded: connect + read timeout, times the retries a cut stream earns
    assert elapsed < (FAST.connect_timeout + FAST.read_timeout) * (FAST.max_stream_retries + 1) + 2


def test_cut_stream_is_reissued_with_a_new_id(base_url):
    HostileHandler.cut_once_seen.clear()
    HostileHandler.seen_ids.clear()
    exchange, _ = _call(base_url + "/cut-once")
    assert exchange.failure is None, str(exchange.failure)
    assert exchange.result == {"ok": True}
    assert len(exchange.request_ids) == 2
    assert exchange.request_ids[0] != exchange.request_ids[1]
    assert HostileHandler.seen_ids[-2:] == list(exchange.request_ids)


def test_cut_stream_retries_are_bounded(base_url):
    HostileHandler.seen_ids.clear()
    exchange, _ = _call(base_url + "/cut")
    assert exchange.failure is not None and exchange.failure.kind == "stream_cut"
    assert len(exchange.request_ids) == FAST.max_stream_retries + 1
    assert len(set(HostileHandler.seen_ids)) == FAST.max_stream_retries + 1


def test_sse_answer_with_crlf_multiline_events_and_comments(base_url):
    exchange, _ = _call(base_url + "/sse-ok")
    assert exchange.failure is None, str(exchange.failure)
    assert exchange.result == {"ok": True}
    assert exchange.wire.messages[0]["method"] == "notifications/progress"
    assert exchange.wire.sse_events == 2


def test_mislabelled_json_is_still_read_and_the_label_kept(base_url):
    exchange, _ = _call(base_url + "/text")
    assert exchange.result == {"ok": True}
    assert exchange.header("content-type") == "text/plain"


def test_connection_refused_is_a_connect_failure():
    exchange, elapsed = _call("http://127.0.0.1:9/mcp")
    assert exchange.failure is not None and exchange.failure.kind == "connect"
    assert elapsed < 3


def test_every_request_carries_the_2026_headers_and_meta(base_url):
    exchange, _ = _call(base_url + "/sse-ok")
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
