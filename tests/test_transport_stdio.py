"""The stdio transport against hostile child processes: bounded failures, never a hang."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from evalcore.errors import TargetError
from evalcore.mcp.client import McpClient
from evalcore.mcp.transport.base import Limits
from evalcore.mcp.transport.stdio import StdioTransport

HOSTILE = Path(__file__).with_name("hostile_stdio.py")
FAST = Limits(connect_timeout=1.0, read_timeout=1.5, max_response_bytes=1_000_000, startup_timeout=1.0)
# For servers that do answer: the wait ends at their answer, so a start-up allowance for a busy machine costs nothing.
ROOMY = replace(FAST, read_timeout=60.0, startup_timeout=120.0)
TIMES_OUT = {"hang", "not-responses", "drip"}


def _exchanges(mode: str, count: int = 1):
    limits = FAST if mode in TIMES_OUT else ROOMY

    async def go():
        client = McpClient(StdioTransport([sys.executable, str(HOSTILE), mode], limits), limits=limits)
        try:
            return [await client.request("tools/list") for _ in range(count)]
        finally:
            await client.aclose()

    return asyncio.run(go())


NO_RESPONSE = f"no response within {FAST.read_timeout:g}s (+{FAST.startup_timeout:g}s allowed for the process to start)"


@pytest.mark.parametrize(
    ("mode", "kind", "reason"),
    [
        ("hang", "timeout", NO_RESPONSE),
        ("garbage", "bad_json", "server wrote a non-JSON line to stdout"),
        ("huge", "too_large", f"a stdout line exceeds {FAST.max_response_bytes} bytes"),
        ("huge100", "too_large", f"a stdout line exceeds {FAST.max_response_bytes} bytes"),
        ("nested", "bad_json", "stdout line nests JSON too deep to decode"),
        ("not-responses", "timeout", f"{NO_RESPONSE}; meanwhile it wrote 3 message(s) that answer no request"),
        ("drip", "timeout", NO_RESPONSE),  # a byte a second does not extend it
        ("exit", "closed", "server process exited with code 3"),
    ],
)
def test_hostile_stdio_servers_yield_bounded_failures(mode, kind, reason):
    """Bounded by construction: each failure names the limit or the event that ended it (the read and start-up timeouts,
    the line cap, the process's exit). A transport that stopped enforcing one ends another way, or hangs into pytest's timeout."""
    (exchange,) = _exchanges(mode)
    assert exchange.failure is not None and exchange.failure.kind == kind, exchange.describe()
    assert exchange.failure.detail.startswith(reason), exchange.failure.detail


def test_a_crashed_server_reports_its_stderr():
    (exchange,) = _exchanges("exit")
    assert "fatal: config file missing" in exchange.failure.detail


def test_answers_are_routed_by_id_and_notifications_kept_aside():
    exchanges = _exchanges("ok", count=3)
    assert [e.result for e in exchanges] == [{"ok": True}] * 3
    assert len({e.request_ids for e in exchanges}) == 3


def test_requests_after_the_process_died_fail_fast():
    """Fast because the exit is noticed: the second request fails as `closed` with the exit code, not as a timeout."""
    first, second = _exchanges("die-after-one", count=2)
    assert first.result == {"ok": True}
    assert second.failure is not None and second.failure.kind == "closed"
    assert second.failure.detail.startswith("server process exited with code 1"), second.failure.detail


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
    (exchange,) = _exchanges("not-responses")
    assert "answer no request" in exchange.failure.detail and "sampling/createMessage" in exchange.failure.detail


def test_the_start_up_allowance_goes_to_the_first_request_only():
    first, second = _exchanges("hang", count=2)
    assert "allowed for the process to start" in first.failure.detail
    assert "allowed for the process to start" not in second.failure.detail
