"""Layer 0 end to end: the reference server passes every check over HTTP and stdio, and every check
fails on a server with the one defect it exists to catch (a check that cannot fail is a defect).
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from evalcore.conformance.context import MAX_PAGES, RunContext
from evalcore.conformance.registry import all_checks
from evalcore.conformance.runner import run_suite
from evalcore.demo_server.defects import DEFECTS
from evalcore.mcp.client import McpClient
from evalcore.mcp.reference import ReferenceServerProcess
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from evalcore.mcp.transport.http import HttpTransport

# Which checks each defect of the reference server must make fail.
EXPECTED_FAILURES: dict[str, set[str]] = {
    "no_discover": {"discover.responds", "discover.lists_2026_07_28", "discover.server_info"},
    "discover_drops_version": {"discover.lists_2026_07_28"},
    "no_server_info": {"discover.server_info"},
    "shuffle_tools": {"list_order.tools"},
    "ttl_not_integer": {"cache_fields.ttl_ms"},
    "bad_cache_scope": {"cache_fields.cache_scope"},
    "no_result_type": {"result_type.present"},
    "unknown_result_type": {"result_type.known_value"},
    "tool_result_no_content": {"result_type.tools_call"},
    "invalid_schema": {"schema_2020_12.valid"},
    "dangling_ref": {"schema_2020_12.refs_resolve"},
    "input_root_not_object": {"schema_2020_12.input_root_object"},
    "structured_content_mismatch": {"schema_2020_12.structured_content"},
    "unknown_tool_is_error": {"error_codes.unknown_tool"},
    "missing_resource_32002": {"error_codes.missing_resource", "error_codes.retired_codes"},
    "unsupported_version_no_data": {"error_codes.unsupported_version"},
    "capability_error_no_data": {"error_codes.missing_capability"},
    "retired_header_code": {"error_codes.legacy_range", "headers.method_required"},
    "ignore_mcp_method": {"headers.method_required", "headers.method_mismatch"},
    "ignore_mcp_name": {"headers.name_required", "headers.name_mismatch"},
    "no_base64_header_decode": {"headers.name_base64"},
    "ignore_version_header": {"headers.version_mismatch", "headers.version_required"},
    "answers_ping": {"removed_methods.ping"},
    "answers_initialize": {"removed_methods.initialize", "removed_methods.no_session_id"},
    "dual_era_answers_modern_initialize": {"removed_methods.initialize", "removed_methods.no_session_id"},
    "tool_error_no_result_type": {"result_type.present"},
    "prompt_result_malformed": {"prompts.get_listed"},
    "initialize_refusal_unnamed": {"removed_methods.initialize_names_versions"},
    "answers_logging_set_level": {"removed_methods.logging_set_level"},
    "answers_resources_subscribe": {"removed_methods.resources_subscribe"},
    "hands_out_session_id": {"removed_methods.no_session_id"},
    "get_allowed": {"http_semantics.get_405"},
    "delete_allowed": {"http_semantics.delete_405"},
    "notification_gets_body": {"http_semantics.notification_202", "cancellation.notification_accepted"},
    "wrong_content_type": {"http_semantics.content_type"},
    "no_origin_check": {"http_semantics.origin_validation"},
    "lax_meta": {"meta_validation.protocol_version_required", "meta_validation.client_capabilities_required"},
    "malformed_tool": {"meta_validation.wire_shapes"},
    "prompt_errors_internal": {"prompts.unknown_prompt", "prompts.required_arguments"},
    "cursor_ignored": {"pagination.invalid_cursor"},
    "cursor_loops": {"pagination.cursors_end"},
    "bad_tool_name": {"tools.name_rules"},
    "completion_without_values": {"completion.result_shape"},
    "completion_answered_undeclared": {"completion.without_capability"},
    "serves_null_id": {"jsonrpc.null_id_refused"},
    "serves_malformed_id": {"jsonrpc.malformed_id_refused"},
    "listen_unacknowledged": {"subscriptions.listen_acknowledged"},
    "mrtr_retry_refused": {"mrtr.round_trip"},
    "mrtr_completes_without_input": {"mrtr.retry_without_responses"},
    "answers_unknown_method": {"removed_methods.unknown_method"},
    "resource_contents_no_uri": {"resources.read_listed"},
    "mrtr_asks_undeclared": {"mrtr.declared_capabilities_only"},
    "mrtr_refuses_unrequested_answer": {"mrtr.extra_responses_ignored"},
    "mrtr_accepts_invalid_answers": {"mrtr.invalid_responses_refused"},
    "progress_foreign_token": {"progress.token_referenced"},
    "progress_goes_back": {"progress.increases"},
    "mrtr_second_round_empty": {"mrtr.multi_round"},
    "mrtr_prompt_retry_refused": {"mrtr.non_tool_round_trip"},
    "crossed_streams": {"http_semantics.concurrent_streams"},
}
# Defects whose rule exists only over stdio (over HTTP the defect changes nothing the suite judges).
STDIO_EXPECTED_FAILURES: dict[str, set[str]] = {
    "serves_batches": {"jsonrpc.batch_refused"},
    "answers_cancellation": {"cancellation.notification_accepted"},
}
# What the official SDK 2.3.0 gets wrong out of the box (see docs/conformance.md): it is dual-era, so
# GET/DELETE and a request without MCP-Protocol-Version may take the legacy path.
BARE_SDK_FAILURES = {
    "error_codes.unknown_tool",
    "headers.version_mismatch",
    "prompts.unknown_prompt",
    "prompts.required_arguments",
    "pagination.invalid_cursor",
}
LIMITS = Limits(connect_timeout=5.0, read_timeout=15.0)
# The suite runs dozens of times against one loopback process; a busy 2-core machine makes each run slow.
pytestmark = pytest.mark.timeout(900)


def _suite(target: Target, runs: int = 1):
    return asyncio.run(run_suite(target, runs=runs, limits=LIMITS, tool_policy="all", deadline_s=60))


def _failing(report) -> set[str]:
    """MUST failures, SHOULD warnings and harness errors: everything a check caught."""
    return {check.id for check in report.checks if check.verdict in ("fail", "warn", "info", "error")}


@pytest.fixture(scope="module")
def servers():
    """Every variant of the reference server (clean, bare, each defect) from one `--all-variants` process, each at
    its own path; the fixture waits for the process's `listening on` line."""
    process = ReferenceServerProcess(["--all-variants"])
    try:
        base = process.url(timeout=600)
        yield {name: f"{base}/{name}/mcp" for name in ("clean", "bare", *DEFECTS)}
    finally:
        process.stop()


# The authorization checks apply only to a protected server: tests/test_conformance_authorization.py runs an
# OAuth-protected official-SDK server with one variant per authorization defect.
AUTHORIZATION_CHECKS = {check.id for check in all_checks() if check.family == "authorization"}


def test_every_check_has_a_defect_that_makes_it_fail():
    caught = set().union(*EXPECTED_FAILURES.values(), *STDIO_EXPECTED_FAILURES.values(), BARE_SDK_FAILURES, AUTHORIZATION_CHECKS)
    assert {check.id for check in all_checks()} <= caught


def test_every_defect_of_the_reference_server_is_exercised():
    assert set(EXPECTED_FAILURES) | set(STDIO_EXPECTED_FAILURES) == set(DEFECTS)


def test_reference_server_passes_every_check_five_times_over_http(servers):
    report = _suite(Target(url=servers["clean"]), runs=5)
    assert _failing(report) == set(), [c.detail for c in report.checks if c.verdict != "pass"]
    assert all(check.passes == 5 for check in report.checks if check.verdict == "pass")
    # The reference server declares no completions, so their result shape has nothing to be tried on; no rule
    # covers a batch over HTTP, so that check only reports what the server did.
    # The reference server asks for no authorization, which is optional: those rules do not apply. Its tools ask
    # for input once, and its prompts ask for none: nothing to judge there. Its knowledge-base search reports progress.
    untestable = {"mrtr.multi_round", "mrtr.non_tool_round_trip"}
    expected = {"completion.result_shape", "jsonrpc.batch_refused"} | AUTHORIZATION_CHECKS | untestable
    assert {check.id for check in report.checks if check.verdict != "pass"} == expected
    assert {check.verdict for check in report.checks if check.id in untestable} == {"not_testable"}
    progress = next(check for check in report.checks if check.id == "progress.token_referenced")
    assert progress.verdict == "pass" and "2 progress notifications" in progress.detail, progress.detail
    batch = next(check for check in report.checks if check.id == "jsonrpc.batch_refused")
    assert batch.verdict == "not_applicable" and "for information, a batch got HTTP 400" in batch.detail
    assert report.passed and report.passed_strictly() and report.server_fingerprint
    assert report.era == "modern-only"


def test_reference_server_passes_over_stdio_with_http_checks_not_applicable():
    report = _suite(Target(stdio=f"{sys.executable} -m evalcore.demo_server --stdio"), runs=2)
    assert _failing(report) == set(), [c.detail for c in report.checks if c.verdict in ("fail", "error")]
    not_applicable = {c.id for c in report.checks if c.verdict == "not_applicable"}
    assert not_applicable == {c.id for c in all_checks() if c.http_only}
    assert report.era == "modern-only"
    assert report.passed


def test_bare_sdk_deviations_are_caught(servers):
    report = _suite(Target(url=servers["bare"]))
    assert report.era == "dual-era", report.era_summary
    assert _failing(report) == BARE_SDK_FAILURES


def test_a_tool_error_result_is_checked_by_default_through_a_call_the_server_refuses(servers):
    """Under the default policy a call without a tool's required arguments runs nothing and still yields a result."""
    report = asyncio.run(run_suite(Target(url=servers["tool_error_no_result_type"]), runs=1, limits=LIMITS, tool_policy="readonly", deadline_s=60))
    present = next(check for check in report.checks if check.id == "result_type.present")
    assert present.verdict == "fail" and "without its required arguments" in present.detail, present.detail
    none = asyncio.run(run_suite(Target(url=servers["tool_error_no_result_type"]), runs=1, limits=LIMITS, tool_policy="none", deadline_s=60))
    assert next(check for check in none.checks if check.id == "result_type.present").verdict == "pass"  # --call-tools none calls nothing


@pytest.mark.parametrize(
    ("annotations", "called"),
    [
        ({"readOnlyHint": True, "openWorldHint": False}, True),
        ({"readOnlyHint": True, "openWorldHint": True}, False),  # a fetch tool: read-only, yet it reaches the internet
        ({"readOnlyHint": True}, False),  # openWorldHint defaults to true
        ({"openWorldHint": False}, False),  # readOnlyHint defaults to false
        (None, False),
    ],
)
def test_readonly_calls_only_closed_world_read_only_tools(annotations, called):
    context = RunContext(McpClient(HttpTransport("http://127.0.0.1:9/mcp", LIMITS), limits=LIMITS), "readonly")
    tool = {"name": "fetch", "inputSchema": {"type": "object"}} | ({"annotations": annotations} if annotations is not None else {})
    assert context.may_call(tool) is called


def test_the_client_walks_every_page_of_a_list_and_says_where_it_stopped(servers):
    """`McpClient.list_all`: the one page walk the runner, the comparisons and the suite share."""

    async def walk(url: str, **options):
        client = McpClient(HttpTransport(url, LIMITS), limits=LIMITS)
        try:
            return await client.list_all("tools/list", **options)
        finally:
            await client.aclose()

    clean = asyncio.run(walk(servers["clean"]))
    assert (clean.problem, clean.failed, len(clean.exchanges)) == (None, None, 1) and "get_weather" in clean.names()
    looping = asyncio.run(walk(servers["cursor_loops"], max_pages=3))
    assert looping.problem == "tools/list still paginating after 3 pages" and looping.failed is None  # cut short, not failed
    assert [(e.request or {}).get("params", {}).get("cursor") for e in looping.exchanges] == [None, "evalcore-same-page-again", "evalcore-same-page-again"]
    assert len(looping.items) == 3 * len(clean.items)  # the items so far are kept
    unreachable = asyncio.run(walk("http://127.0.0.1:9/mcp"))
    assert unreachable.failed is unreachable.exchanges[0] and unreachable.problem == unreachable.failed.describe() and unreachable.items == []

    async def suite_listing():
        context = RunContext(McpClient(HttpTransport(servers["cursor_loops"], LIMITS), limits=LIMITS), "all")
        try:
            return context, await context.listing("tools/list")
        finally:
            await context.client.aclose()

    context, listing = asyncio.run(suite_listing())
    assert len(listing.exchanges) == MAX_PAGES and context.exchanges == listing.exchanges  # the suite's log holds every page it judges


def test_a_dual_era_server_owes_an_initialize_with_the_2026_envelope_a_404(servers):
    report = _suite(Target(url=servers["dual_era_answers_modern_initialize"]))
    assert report.era == "dual-era", report.era_summary
    initialize = next(check for check in report.checks if check.id == "removed_methods.initialize")
    assert initialize.verdict == "fail" and "HTTP 200" in initialize.detail, initialize.detail
    assert not report.passed


@pytest.mark.parametrize(("defect", "check_id"), [("serves_null_id", "jsonrpc.null_id_refused"), ("serves_malformed_id", "jsonrpc.malformed_id_refused")])
def test_a_rule_binding_the_requests_sender_warns_and_never_fails_the_server(servers, defect, check_id):
    report = _suite(Target(url=servers[defect]))
    caught = next(check for check in report.checks if check.id == check_id)
    assert (caught.level, caught.binds, caught.verdict) == ("MUST", "sender", "warn")
    assert "binds the request's sender" in caught.detail and "served with a result" in caught.detail
    assert report.passed and not report.passed_strictly()


def test_only_the_id_rules_bind_the_sender():
    """The audit: every other check quotes a sentence whose subject is the server (or what the server sends)."""
    assert {check.id for check in all_checks() if check.binds != "server"} == {"jsonrpc.null_id_refused", "jsonrpc.malformed_id_refused"}


@pytest.mark.parametrize("defect", sorted(EXPECTED_FAILURES))
def test_each_defect_fails_its_checks(servers, defect):
    failing = _failing(_suite(Target(url=servers[defect])))
    assert EXPECTED_FAILURES[defect] <= failing, f"{defect}: expected {EXPECTED_FAILURES[defect]} among failures, got {failing}"


@pytest.mark.parametrize(
    "defect", ["no_result_type", "unknown_tool_is_error", "missing_resource_32002", "answers_ping", "lax_meta", "shuffle_tools", "listen_unacknowledged"]
)
def test_message_level_defects_are_caught_over_stdio(defect):
    report = _suite(Target(stdio=f"{sys.executable} -m evalcore.demo_server --stdio --defect {defect}"))
    assert EXPECTED_FAILURES[defect] <= _failing(report)


@pytest.mark.parametrize("defect", sorted(STDIO_EXPECTED_FAILURES))
def test_stdio_only_defects_fail_their_checks_over_stdio_and_nothing_over_http(servers, defect):
    report = _suite(Target(stdio=f"{sys.executable} -m evalcore.demo_server --stdio --defect {defect}"))
    assert _failing(report) == STDIO_EXPECTED_FAILURES[defect], [c.detail for c in report.checks if c.verdict in ("fail", "error")]
    over_http = _suite(Target(url=servers[defect]))
    assert not STDIO_EXPECTED_FAILURES[defect] & _failing(over_http)


def test_docs_quote_the_spec_sentence_of_every_check_and_its_level():
    from pathlib import Path

    docs = " ".join((Path(__file__).resolve().parents[1] / "docs" / "conformance.md").read_text().split())
    missing = [check.id for check in all_checks() if check.quote not in docs]
    assert missing == []
    for check in all_checks():
        assert f"| `{check.id}` | {check.level} |" in docs, check.id
