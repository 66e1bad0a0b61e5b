"""The stdio transport against hostile child processes: bounded failures, never a hang."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from evalcore.client import McpClient
from evalcore.errors import TargetError
from evalcore.transport.base import Limits
from evalcore.transport.stdio import StdioTransport

HOSTILE = Path(__file__).with_name("hostile_stdio.py")
FAST = Limits(connect_timeout=1.0, read_timeout=1.5, max_response_bytes=1_000_000, startup_timeout=1.0)


def _exchanges(mode: str, count: int = 1):
    async def go():
        client = McpClient(StdioTransport([sys.executable, str(HOSTILE), mode], FAST), limits=FAST)
        try:
            return [await client.request("tools/list") for _ in range(count)]
        finally:
            await client.aclose()

    started = time.perf_counter()
    result = asyncio.run(go())
    return result, time.perf_counter() - started


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("hang", "timeout"),
        ("garbage", "bad_json"),
        ("huge", "too_large"),
        ("huge100", "too_large"),
        ("nested", "bad_json"),
        ("not-responses", "timeout"),
        ("drip", "timeout"),
        ("exit", "closed"),
    ],
)
def test_hostile_stdio_servers_yield_bounded_failures(mode, kind):
    (exchange,), elapsed = _exchanges(mode)
    assert exchange.failure is not None and exchange.failure.kind == kind, exchange.describe()
    assert elapsed < FAST.read_timeout + FAST.startup_timeout + 4


def test_a_crashed_server_reports_its_stderr():
    (exchange,), _ = _exchanges("exit")
    assert "fatal: config file missing" in exchange.failure.detail


def test_answers_are_routed_by_id_and_notifications_kept_aside():
    exchanges, _ = _exchanges("ok", count=3)
    assert [e.result for e in exchanges] == [{"ok": True}] * 3
    assert len({e.request_ids for e in exchanges}) == 3


def test_requests_after_the_process_died_fail_fast():
    (first, second), elapsed = _exchanges("die-after-one", count=2)
    assert first.result == {"ok": True}
    assert second.failure is not None and second.failure.kind == "closed"
    assert elapsed < FAST.read_timeout + FAST.startup_timeout + 4


def test_a_command_that_does_not_exist_is_a_target_error():
    async def go():
        transport = StdioTransport("no-such-command-evalcore --stdio", FAST)
        try:
            await transport.send(b"{}", headers={}, expect_id=1)
        finally:
            await transport.aclose()

    with pytest.raises(TargetError, match="cannot start stdio server"):
        asyncio.run(go())


def test_messages_that_answer_nothing_are_named_in_the_timeout():
    (exchange,), _ = _exchanges("not-responses")
    assert "answer no request" in exchange.failure.detail and "sampling/createMessage" in exchange.failure.detail


def test_the_start_up_allowance_goes_to_the_first_request_only():
    (first, second), _ = _exchanges("hang", count=2)
    assert "allowed for the process to start" in first.failure.detail
    assert "allowed for the process to start" not in second.failure.detail
