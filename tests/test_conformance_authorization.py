"""Layer 0 on an OAuth-protected official-SDK server (its own AuthSettings and a local token verifier), and on one
variant per authorization defect: run without credentials (the server answers 401) and with `--header Authorization`,
each time with a `--foreign-token` (one issued for another resource)."""

from __future__ import annotations

import asyncio
import json

import pytest

from evalcore.cli import main as cli_main
from evalcore.conformance.runner import run_suite
from evalcore.errors import TargetError
from evalcore.mcp.local_server import LocalServerProcess
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from tests.sdk_servers.oauth_app import DEFECTS, FOREIGN_TOKEN, VALID_TOKEN

LIMITS = Limits(connect_timeout=5.0, read_timeout=15.0)
pytestmark = pytest.mark.timeout(900)
CHECKS = (
    "authorization.invalid_token_refused",
    "authorization.resource_metadata_discoverable",
    "authorization.metadata_authorization_servers",
    "authorization.metadata_resource",
    "authorization.metadata_readable",
    "authorization.metadata_content_type",
    "authorization.challenge_on_401",
    "authorization.token_audience",
)
ALL_PASS = dict.fromkeys(CHECKS, "pass")
UNREAD = {  # what reads the metadata document has nothing to read: metadata_readable fails for it
    "authorization.metadata_authorization_servers": "not_testable",
    "authorization.metadata_resource": "not_testable",
    "authorization.metadata_content_type": "not_testable",
}
# What each variant gets, run with or without credentials alike.
EXPECTED = {
    "clean": ALL_PASS,
    "no_discovery": {**ALL_PASS, **UNREAD, "authorization.resource_metadata_discoverable": "fail", "authorization.metadata_readable": "fail"},
    "wrong_resource": {**ALL_PASS, "authorization.metadata_resource": "fail"},
    "invalid_token_500": {**ALL_PASS, "authorization.invalid_token_refused": "fail"},
    # The 401 names a URL: discovery is there, but what it names cannot be read.
    "metadata_url_404": {**ALL_PASS, **UNREAD, "authorization.metadata_readable": "fail"},
    # Read with the user's token it would pass; a client has none yet.
    "metadata_needs_token": {**ALL_PASS, **UNREAD, "authorization.metadata_readable": "fail"},
    "no_challenge_header": {**ALL_PASS, "authorization.challenge_on_401": "fail"},
    "metadata_text_plain": {**ALL_PASS, "authorization.metadata_content_type": "fail"},
    "accepts_foreign_token": {**ALL_PASS, "authorization.token_audience": "fail"},
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


def _suite(url: str, authenticated: bool, foreign_token: str | None = FOREIGN_TOKEN, token: str = VALID_TOKEN):
    headers = (("Authorization", f"Bearer {token}"),) if authenticated else ()
    return asyncio.run(run_suite(Target(url=url, headers=headers), runs=1, limits=LIMITS, deadline_s=240, foreign_token=foreign_token))


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


def test_a_protected_server_whose_metadata_url_answers_404_is_not_conformant_with_only_authorization(oauth_servers, capsys):
    assert cli_main(["conformance", "--url", oauth_servers["metadata_url_404"], "--runs", "1", "--no-db", "--only", "authorization"]) == 1
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].startswith("NOT CONFORMANT"), out
    flat = " ".join(out.split())  # a reason is wrapped to the terminal's width, which differs from one runner to another
    assert "/.well-known/oauth-protected-resource/missing" in flat and "HTTP 404" in flat


def test_a_refused_token_is_reported_as_refused_not_as_missing(oauth_servers, capsys):
    report = _suite(oauth_servers["clean"], authenticated=True, token="evalcore-expired-token")
    untested = [c for c in report.checks if c.family != "authorization" and c.verdict == "not_testable"]
    assert untested and report.credentials_refused and not report.passed
    assert all("the server refused the credentials given" in c.detail and "run with --header" not in c.detail for c in untested)
    header = ["--header", "Authorization: Bearer evalcore-expired-token"]
    assert cli_main(["conformance", "--url", oauth_servers["clean"], *header, "--runs", "1", "--no-db"]) == 1
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].startswith("NOT JUDGED (the server refused the credentials given in --header Authorization")
    assert "run with --header" not in out


def test_without_a_foreign_token_the_audience_is_not_testable(oauth_servers):
    report = _suite(oauth_servers["accepts_foreign_token"], authenticated=True, foreign_token=None)
    audience = next(c for c in report.checks if c.id == "authorization.token_audience")
    assert audience.verdict == "not_testable" and "--foreign-token" in audience.detail


def test_the_foreign_token_option_fails_a_server_that_accepts_it_and_never_shows_the_token(oauth_servers, capsys, tmp_path):
    out_json = tmp_path / "report.json"
    header = ["--header", f"Authorization: Bearer {VALID_TOKEN}"]
    argv = ["conformance", "--url", oauth_servers["accepts_foreign_token"], *header, "--foreign-token", FOREIGN_TOKEN]
    assert cli_main([*argv, "--runs", "1", "--no-db", "--only", "authorization", "--json", str(out_json)]) == 1
    printed = capsys.readouterr()
    checks = {c["id"]: c for c in json.loads(out_json.read_text(encoding="utf-8"))["checks"]}
    assert checks["authorization.token_audience"]["verdict"] == "fail"
    assert "accepted a token not issued for it" in checks["authorization.token_audience"]["detail"]
    assert FOREIGN_TOKEN not in printed.out + printed.err + out_json.read_text(encoding="utf-8")
