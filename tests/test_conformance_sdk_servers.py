"""Layer 0 on servers nobody here wrote: public SDKs installed by the project (PyPI, npm), default settings.

Every FAIL or WARN on them is asserted to be one known, real deviation from the
spec sentence the check quotes (docs/conformance.md "What public SDKs get
wrong"); anything else showing up is a false failure and fails the test. Each
also gets its era right: the SDKs answer a legacy `initialize` too (dual-era),
and a 2025-11-25-only server gets its one-line verdict and exit code 3.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
from pathlib import Path

import pytest

from evalcore.cli import main as cli_main
from evalcore.conformance.runner import run_suite
from evalcore.errors import TargetError
from evalcore.mcp.local_server import LocalServerProcess
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from evalcore.store.conformance import latest_conformance_run

HERE = Path(__file__).parent
TS_DIR = HERE / "ts_sdk_server"
LIMITS = Limits(connect_timeout=5.0, read_timeout=15.0)
PY = sys.executable
pytestmark = pytest.mark.timeout(900)  # server start-up on a loaded 2-core machine is slow; fixtures wait for readiness

# The real deviations each server shows at its defaults: {check id: verdict}. None of the three SDKs
# refuses a cursor it never handed out; the Python SDK answers prompt errors with -32603.
CURSOR = {"pagination.invalid_cursor": "warn"}
PROMPT_ERRORS = {"prompts.unknown_prompt": "warn", "prompts.required_arguments": "warn"}
FASTMCP_HTTP = {"headers.version_mismatch": "fail", "http_semantics.origin_validation": "fail", "error_codes.unknown_tool": "warn", **CURSOR}
PYTHON_SDK_HTTP = {"headers.version_mismatch": "fail", "error_codes.unknown_tool": "warn", **CURSOR, **PROMPT_ERRORS}
TS_SDK_HTTP = {"error_codes.legacy_range": "warn", **CURSOR}
FASTMCP_STDIO = {"error_codes.unknown_tool": "warn", **CURSOR}
PYTHON_SDK_STDIO = {"error_codes.unknown_tool": "warn", **CURSOR, **PROMPT_ERRORS}
TS_SDK_STDIO = {"error_codes.unsupported_version": "fail", **CURSOR}


# What the checks of subscriptions/listen and notifications/cancelled find on each SDK: they are exercised, not
# vacuous. FastMCP declares no listChanged or resources.subscribe, so it offers nothing to listen for.
# Every SDK server lists a resource and a template, which resources.read_listed reads.
READS = {"resources.read_listed": "pass"}
EXERCISED = {
    "fastmcp": {"subscriptions.listen_acknowledged": "not_testable", "cancellation.notification_accepted": "pass", **READS},
    "python_sdk": {"subscriptions.listen_acknowledged": "pass", "cancellation.notification_accepted": "pass", **READS},
    "ts_sdk": {"subscriptions.listen_acknowledged": "pass", "cancellation.notification_accepted": "pass", **READS},
}


def _verdicts(report, check_ids) -> dict[str, str]:
    return {check.id: check.verdict for check in report.checks if check.id in check_ids}


def _server(module: str, label: str) -> LocalServerProcess:
    return LocalServerProcess(module, ["--http"], label=label, error=TargetError)


def _deviations(report) -> dict[str, str]:
    return {check.id: check.verdict for check in report.checks if check.verdict in ("fail", "warn", "info", "error")}


def _suite(target: Target, runs: int = 1):
    return asyncio.run(run_suite(target, runs=runs, limits=LIMITS, deadline_s=240))


@pytest.fixture(scope="module")
def http_servers(node):
    processes = {
        "fastmcp": _server("tests.sdk_servers.fastmcp_app", "FastMCP server"),
        "python_sdk": _server("tests.sdk_servers.mcpserver_app", "Python SDK server"),
        "ts_sdk": _server("tests.sdk_servers.ts_sdk_app", "TypeScript SDK server"),
        "legacy": _server("tests.legacy_server", "legacy server"),
    }
    try:
        yield {name: process.url(timeout=600) for name, process in processes.items()}
    finally:
        for process in processes.values():
            process.stop()


@pytest.mark.parametrize(("server", "expected"), [("fastmcp", FASTMCP_HTTP), ("python_sdk", PYTHON_SDK_HTTP), ("ts_sdk", TS_SDK_HTTP)])
def test_sdk_servers_over_http_are_dual_era_with_only_their_real_deviations(http_servers, server, expected):
    report = _suite(Target(url=http_servers[server]), runs=2)
    assert report.era == "dual-era", report.era_summary
    assert _deviations(report) == expected, [(c.id, c.verdict, c.detail) for c in report.checks if c.verdict in ("fail", "warn", "error")]
    assert report.passed == ("fail" not in expected.values())
    assert _verdicts(report, EXERCISED[server]) == EXERCISED[server]
    not_applicable = {c.id for c in report.checks if c.verdict == "not_applicable"}
    # The rules written for modern-only servers, and the MAY for servers that serve 2025-03-26 clients.
    assert {"http_semantics.get_405", "http_semantics.delete_405", "headers.version_required"} <= not_applicable
    # An initialize sent with the 2026-07-28 envelope is a 2026-07-28 request, whatever else the server speaks.
    assert _verdicts(report, {"removed_methods.initialize"}) == {"removed_methods.initialize": "pass"}


@pytest.mark.parametrize(
    ("server", "module", "expected"),
    [
        ("fastmcp", "tests.sdk_servers.fastmcp_app", FASTMCP_STDIO),
        ("python_sdk", "tests.sdk_servers.mcpserver_app", PYTHON_SDK_STDIO),
        ("ts_sdk", "tests.sdk_servers.ts_sdk_app", TS_SDK_STDIO),
    ],
    ids=["fastmcp", "python_sdk", "ts_sdk"],
)
def test_sdk_servers_over_stdio_are_dual_era_with_only_their_real_deviations(node, server, module, expected):
    report = _suite(Target(stdio=f"{PY} -m {module} --stdio"))
    assert report.era == "dual-era", report.era_summary
    assert _deviations(report) == expected, [(c.id, c.verdict, c.detail) for c in report.checks if c.verdict in ("fail", "warn", "error")]
    assert _verdicts(report, EXERCISED[server]) == EXERCISED[server]
    assert _verdicts(report, {"jsonrpc.batch_refused"}) == {"jsonrpc.batch_refused": "pass"}


def test_a_deviation_shows_the_servers_own_status_code_and_message(http_servers):
    report = _suite(Target(url=http_servers["python_sdk"]))
    detail = next(c.detail for c in report.checks if c.id == "headers.version_mismatch")
    assert "HTTP 400" in detail and "-32600" in detail and "Missing session ID" in detail, detail


def test_legacy_only_server_gets_one_verdict_and_its_exit_code_and_no_session_left(http_servers, capsys):
    url = http_servers["legacy"]
    code = cli_main(["conformance", "--url", url, "--no-db"])
    out = capsys.readouterr().out
    assert code == 3
    assert "era: legacy-only" in out.splitlines()[0]
    assert "speaks 2025-11-25 only: 2026-07-28 conformance does not apply" in out
    assert "protocolVersion 2025-11-25" in out and "legacy-under-test" in out
    stats = json.loads(urllib.request.urlopen(url.removesuffix("/mcp") + "/stats", timeout=10).read())
    assert stats["minted"] == stats["deleted"] >= 1  # the probe's session was ended
    assert stats["requests"] <= 3  # discover, one initialize: no check was run against it


def test_legacy_only_stdio_server_gets_the_same_verdict(tmp_path):
    report = _suite(Target(stdio=f"{PY} {HERE / 'legacy_server.py'} --stdio"))
    assert report.era == "legacy-only" and report.checks == ()
    assert report.legacy_verdict is not None and report.legacy_verdict.startswith("speaks 2025-11-25 only")


def test_a_legacy_only_npm_server_is_stored_with_its_era_and_exits_3(node, tmp_path, capsys):
    """@modelcontextprotocol/server-memory (on the TypeScript SDK v1) speaks 2025-11-25 only."""
    db = tmp_path / "evals.duckdb"
    memory_server = TS_DIR / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    code = cli_main(["conformance", "--stdio", f"{node} {memory_server}", "--runs", "1", "--db", str(db)])
    captured = capsys.readouterr()
    assert code == 3, captured.err
    assert "era: legacy-only" in captured.out.splitlines()[0] and "memory-server" in captured.out
    latest = latest_conformance_run(db)
    assert latest is not None and latest["era"] == "legacy-only" and latest["checks"] == []
    assert latest["passed"] is False and latest["era_summary"].startswith("era: legacy-only")


def test_json_report_names_the_era(http_servers, tmp_path):
    out = tmp_path / "report.json"
    assert cli_main(["conformance", "--url", http_servers["ts_sdk"], "--runs", "1", "--no-db", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["era"] == "dual-era" and data["eraSummary"].startswith("era: dual-era")
    assert all(check["quote"] and check["eras"] for check in data["checks"])


def test_strict_fails_on_should_warnings(http_servers):
    url = http_servers["ts_sdk"]
    assert cli_main(["conformance", "--url", url, "--runs", "1", "--no-db", "--only", "error_codes", "--only", "http_semantics"]) == 0
    assert cli_main(["conformance", "--url", url, "--runs", "1", "--no-db", "--only", "error_codes", "--only", "http_semantics", "--strict"]) == 1


def test_unreachable_server_is_a_target_error():
    with pytest.raises(TargetError, match="cannot reach"):
        _suite(Target(url="http://127.0.0.1:9/mcp"))
