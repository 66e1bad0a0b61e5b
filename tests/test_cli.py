"""The command line as a user meets it: exit codes, reports, the store, one-line errors, the README example."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from evalcore.cli import main
from evalcore.conformance.registry import FAMILIES
from evalcore.mcp.reference import running_reference_server
from evalcore.store.conformance import latest_conformance_run
from tests.hostile_http import HostileHandler, hostile_server

ROOT = Path(__file__).resolve().parents[1]
REPORT_CHECK_KEYS = {"id", "family", "title", "spec", "passes", "runs", "passed", "detail"}


def test_conformant_server_exits_0_with_json_junit_and_store(reference_url, tmp_path, capsys):
    db = tmp_path / "evals.duckdb"
    code = main(["conformance", "--url", reference_url, "--runs", "2", "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml"), "--db", str(db)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "CONFORMANT" in out and "NOT CONFORMANT" not in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["target"] == reference_url and report["protocolVersion"] == "2026-07-28"
    assert report["runs"] == 2 and report["passed"] is True
    assert all(set(check) >= REPORT_CHECK_KEYS for check in report["checks"])
    assert {check["family"] for check in report["checks"]} == set(FAMILIES)  # every family has checks that ran
    assert all(re.fullmatch(r"[a-z_0-9]+\.[a-z_0-9]+", check["id"]) for check in report["checks"])
    suite = ET.parse(tmp_path / "r.xml").getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests")) == len(report["checks"]) and suite.get("failures") == "0"
    stored = latest_conformance_run(db)
    assert stored is not None and stored["passed"] is True and len(stored["checks"]) == len(report["checks"])


def test_broken_server_exits_1_and_names_the_rule(tmp_path, capsys):
    with running_reference_server(["--defect", "answers_ping"]) as url:
        code = main(["conformance", "--url", url, "--runs", "1", "--json", str(tmp_path / "r.json"), "--no-db"])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(r"removed_methods\.ping\s+MUST\s+0/1\s+FAIL", out), out
    failed = [c["id"] for c in json.loads((tmp_path / "r.json").read_text())["checks"] if not c["passed"] and c["verdict"] == "fail"]
    assert failed == ["removed_methods.ping"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["conformance"], "one of the arguments --url --stdio --reference is required"),
        (["conformance", "--url", "http://127.0.0.1:9/mcp", "--runs", "0"], "--runs must be at least 1"),
        (["conformance", "--url", "ftp://example/mcp"], "--url must start with http"),
        (["conformance", "--url", "http://127.0.0.1:9/mcp", "--no-db"], "cannot reach http://127.0.0.1:9/mcp"),
        (["conformance", "--stdio", "no-such-server-binary --stdio", "--no-db"], "cannot start stdio server"),
        (["conformance", "--stdio", f"{sys.executable} -c 'import sys; sys.exit(4)'", "--no-db"], "exited with code 4"),
        (["conformance", "--url", "http://127.0.0.1:9/mcp", "--only", "nothing"], "matches no check"),
        (["nonsense"], "invalid choice"),
    ],
)
def test_usage_and_target_errors_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("error: ")


def test_hanging_http_server_is_reported_and_the_run_ends(tmp_path, capsys):
    """The run ends because each request ends at the 1 s `--timeout` and nothing more is sent to a server that never answers.

    Bounded by construction: the era probe (discover, initialize), each cut at 1 s, and no further run. Fails if the
    timeout is not applied (another reason, the suite deadline's note, or the pytest timeout), or if checks or further
    runs are still sent to a server that did not answer server/discover (more requests).
    """
    seen_before = len(HostileHandler.seen_ids)
    with hostile_server() as base:
        code = main(["conformance", "--url", base + "/hang", "--runs", "2", "--timeout", "1", "--no-db", "--json", str(tmp_path / "r.json")])
    assert code == 1
    report = json.loads((tmp_path / "r.json").read_text())
    _assert_dead_server_report(report, "timeout: ReadTimeout after 1s")
    assert len(HostileHandler.seen_ids) - seen_before <= 2  # the era probe's discover and initialize, nothing after


def test_hanging_stdio_server_is_reported_and_the_run_ends(tmp_path):
    """Each request to a stdio server that never answers ends at `--timeout` plus `--startup-timeout`, as the reason says.

    Fails if either timeout is not applied (another reason, the suite deadline's note, or the pytest timeout).
    """
    hostile = Path(__file__).with_name("hostile_stdio.py")
    argv = ["conformance", "--stdio", f"{sys.executable} {hostile} hang", "--runs", "2", "--timeout", "1", "--startup-timeout", "1"]
    code = main([*argv, "--no-db", "--json", str(tmp_path / "r.json")])
    assert code == 1
    report = json.loads((tmp_path / "r.json").read_text())
    _assert_dead_server_report(report, "timeout: no response within 1s (+1s allowed for the process to start)")


def _assert_dead_server_report(report: dict, reason: str) -> None:
    """A server that answered nothing: discover fails once with the reason, the rest is not testable, no deadline note."""
    assert not report["passed"]
    assert len(report["notes"]) == 1 and "no further run was started" in report["notes"][0] and reason in report["notes"][0]
    checks = {c["id"]: c for c in report["checks"]}
    discover = checks.pop("discover.responds")
    assert discover["verdict"] == "fail" and discover["runs"] == 1 and discover["detail"].endswith(reason)
    assert all(c["verdict"] in ("not_testable", "not_applicable") for c in checks.values())
    assert all(c["detail"].endswith(f"({'server/discover: ' + reason})") for c in checks.values() if c["verdict"] == "not_testable")


def test_garbage_server_is_reported(tmp_path, capsys):
    with hostile_server() as base:
        assert main(["conformance", "--url", base + "/garbage", "--runs", "1", "--timeout", "1", "--no-db"]) == 1
    assert "bad_json" in capsys.readouterr().out


def test_list_names_every_check(capsys):
    assert main(["conformance", "--list"]) == 0
    out = capsys.readouterr().out
    assert "headers.version_mismatch" in out and "meta_validation.wire_shapes" in out


# What `evalcore conformance` never uses: the model layer, the dashboard, the store without a store (--no-db), the
# pydantic wire models (it validates against their JSON Schema) and httpx (its HTTP client is aiohttp).
NOT_FOR_CONFORMANCE = ("litellm", "streamlit", "pandas", "plotly", "duckdb", "pydantic", "mcp_types", "mcp", "httpx", "click", "rich", "pygments")


def test_conformance_command_imports_nothing_it_does_not_use(reference_url):
    script = (
        "import sys; from evalcore.cli import main; "
        f"code = main(['conformance', '--url', {reference_url!r}, '--runs', '1', '--no-db']); "
        f"heavy = [m for m in {NOT_FOR_CONFORMANCE!r} if m in sys.modules]; "
        "print('HEAVY', heavy); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout
