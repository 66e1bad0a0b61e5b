"""Layer 0 on an OAuth-protected official-SDK server (its own AuthSettings and a local token verifier), and on one
variant per authorization defect: run without credentials (the server answers 401) and with `--header Authorization`."""

from __future__ import annotations

import asyncio

import pytest

from evalcore.cli import main as cli_main
from evalcore.conformance.runner import run_suite
from evalcore.errors import TargetError
from evalcore.mcp.local_server import LocalServerProcess
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from tests.sdk_servers.oauth_app import DEFECTS, VALID_TOKEN

LIMITS = Limits(connect_timeout=5.0, read_timeout=15.0)
pytestmark = pytest.mark.timeout(900)
CHECKS = (
    "authorization.invalid_token_refused",
    "authorization.resource_metadata_discoverable",
    "authorization.metadata_authorization_servers",
    "authorization.metadata_resource",
)
ALL_PASS = dict.fromkeys(CHECKS, "pass")
# What each variant gets, run with or without credentials alike.
EXPECTED = {
    "clean": ALL_PASS,
    "no_discovery": {
        **ALL_PASS,
        "authorization.resource_metadata_discoverable": "fail",
        "authorization.metadata_authorization_servers": "not_testable",
        "authorization.metadata_resource": "not_testable",
    },
    "wrong_resource": {**ALL_PASS, "authorization.metadata_resource": "fail"},
    "invalid_token_500": {**ALL_PASS, "authorization.invalid_token_refused": "fail"},
}


@pytest.fixture(scope="module")
def oauth_servers():
    def start(name: str) -> LocalServerProcess:
        args = [] if name == "clean" else ["--defect", name]
        return LocalServerProcess("tests.sdk_servers.oauth_app", args, label=f"OAuth server ({name})", error=TargetError)

    processes = {name: start(name) for name in ("clean", *DEFECTS)}
    try:
        yield {name: process.url(timeout=600) for name, process in processes.items()}
    finally:
        for process in processes.values():
            process.stop()


def _suite(url: str, authenticated: bool):
    headers = (("Authorization", f"Bearer {VALID_TOKEN}"),) if authenticated else ()
    return asyncio.run(run_suite(Target(url=url, headers=headers), runs=1, limits=LIMITS, deadline_s=240))


@pytest.mark.parametrize("authenticated", [False, True], ids=["without-credentials", "with-header"])
@pytest.mark.parametrize("variant", ["clean", *DEFECTS])
def test_authorization_checks_catch_each_defect_and_pass_the_sdk(oauth_servers, variant, authenticated):
    report = _suite(oauth_servers[variant], authenticated)
    verdicts = {check.id: check.verdict for check in report.checks if check.family == "authorization"}
    assert verdicts == EXPECTED[variant], [(c.id, c.detail) for c in report.checks if c.family == "authorization"]


def test_without_credentials_only_the_authorization_checks_are_judged_and_the_run_does_not_pass(oauth_servers):
    report = _suite(oauth_servers["clean"], authenticated=False)
    others = [check for check in report.checks if check.family != "authorization"]
    assert {check.verdict for check in others} <= {"not_testable", "not_applicable"}
    assert all("the server requires authorization (server/discover: HTTP 401" in c.detail for c in others if c.verdict == "not_testable")
    assert report.authorization_required and not report.passed  # never green on what was not tried


def test_with_the_header_every_check_runs_authenticated(oauth_servers):
    report = _suite(oauth_servers["clean"], authenticated=True)
    assert not report.authorization_required
    assert next(c for c in report.checks if c.id == "discover.responds").verdict == "pass"
    assert next(c for c in report.checks if c.id == "result_type.tools_call").verdict == "pass"


def test_the_command_says_the_run_was_not_judged_for_want_of_credentials(oauth_servers, capsys):
    assert cli_main(["conformance", "--url", oauth_servers["clean"], "--runs", "1", "--no-db"]) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("NOT JUDGED (the server requires authorization; run with --header 'Authorization: Bearer ...')")
