"""The whole Layer 0 suite against hostile servers over both transports: a verdict with a reason, never a hang or a traceback."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from evalcore.conformance.runner import run_suite
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from tests.hostile_http import hostile_server

HOSTILE_STDIO = Path(__file__).with_name("hostile_stdio.py")
LIMITS = Limits(connect_timeout=1.0, read_timeout=1.0, max_response_bytes=1_000_000, startup_timeout=5.0)
# For a server that never answers, its start-up allowance only decides how long the wait is, not what is found:
# a shorter one keeps each such case from holding a test worker for ~10 s.
SILENT_LIMITS = Limits(connect_timeout=1.0, read_timeout=1.0, max_response_bytes=1_000_000, startup_timeout=2.0)


def _suite(target: Target):
    return asyncio.run(run_suite(target, runs=2, limits=LIMITS, deadline_s=120))


@pytest.mark.parametrize(("mode", "reason"), [("huge100", "too_large"), ("nested", "too deep"), ("not-responses", "answer no request"), ("drip", "timeout")])
def test_hostile_stdio_server_gets_failed_checks_with_the_reason(mode, reason):
    report = _suite(Target(stdio=f"{sys.executable} {HOSTILE_STDIO} {mode}"))
    assert not report.passed
    assert not [c.id for c in report.checks if c.verdict == "error"]  # the harness itself never broke
    assert any(reason in c.detail for c in report.checks), [c.detail for c in report.checks][:3]


@pytest.mark.parametrize(("path", "reason"), [("/nested", "too deep"), ("/huge", "too_large"), ("/slow-drip", "timeout"), ("/garbage", "bad_json")])
def test_hostile_http_server_gets_failed_checks_with_the_reason(path, reason):
    with hostile_server() as base:
        report = _suite(Target(url=base + path))
    assert not report.passed
    assert not [c.id for c in report.checks if c.verdict == "error"]
    assert any(reason in c.detail for c in report.checks), [c.detail for c in report.checks][:3]


@pytest.mark.parametrize("mode", ["hang", "deaf", "not-jsonrpc", "garbage"])
def test_a_stdio_server_that_answers_nothing_costs_one_first_request_and_no_further_run(mode):
    """Silent, deaf to SIGTERM, or writing what answers no request: server/discover fails, the rest is not testable."""
    report = asyncio.run(run_suite(Target(stdio=f"{sys.executable} {HOSTILE_STDIO} {mode}"), runs=5, limits=SILENT_LIMITS, deadline_s=600))
    by_id = {check.id: check for check in report.checks}
    discover = by_id.pop("discover.responds")
    assert (discover.verdict, discover.passes, discover.runs) == ("fail", 0, 1)
    assert discover.detail.startswith("the server did not answer: server/discover: ")
    assert {check.verdict for check in by_id.values()} == {"not_testable", "not_applicable"}
    assert all(check.detail.startswith("not testable: the server did not answer (") for check in by_id.values() if check.verdict == "not_testable")
    assert any("no further run was started" in note for note in report.notes)
    assert not report.passed
