"""Orchestration: find the server's era, run every conformance check `runs` times, reduce to a report.

A check passes only at runs/runs (hard gate). Its level decides what a failure
means: a MUST failure fails the suite, a SHOULD failure is a warning (failing
only under `strict`), a MAY failure is a note. A rule not written for the
server's era or transport is "not applicable"; a legacy-only server gets one
verdict and no checks. A server that stops answering fails the checks of that
run with the reason; the harness itself never hangs (every request is
bounded, and the whole suite has a deadline).
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from evalcore import __version__
from evalcore.conformance.context import RunContext, ToolPolicy
from evalcore.conformance.era import EraProfile, detect_era
from evalcore.conformance.registry import NOT_JUDGED, Check, Era, Outcome, Subject, Verdict, all_checks
from evalcore.errors import TargetError
from evalcore.mcp.client import Exchange, McpClient
from evalcore.mcp.fingerprint import server_fingerprint
from evalcore.mcp.protocol.constants import PROTOCOL_VERSION
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits


@dataclass(frozen=True)
class CheckReport:
    id: str
    family: str
    title: str
    spec: str
    level: str
    passes: int
    runs: int
    verdict: Outcome  # pass | fail (MUST) | warn (SHOULD) | info (MAY) | error | not_applicable | not_testable
    detail: str
    quote: str = ""
    eras: tuple[Era, ...] = ()
    binds: Subject = "server"

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


@dataclass(frozen=True)
class SuiteReport:
    target: str
    transport: str
    runs: int
    tool_policy: str
    started_at: datetime
    duration_s: float
    server_fingerprint: str | None
    server_name: str | None
    checks: tuple[CheckReport, ...]
    protocol_version: str = PROTOCOL_VERSION
    evalcore_version: str = __version__
    notes: tuple[str, ...] = field(default=())
    era: Era = "modern-only"
    era_summary: str = ""
    legacy_verdict: str | None = None  # set for a legacy-only server, which gets no checks

    @property
    def authorization_required(self) -> bool:
        """The server answered 401, to a suite run without credentials or with credentials it refused: only the
        authorization checks were judged."""
        return any(check.verdict == "not_testable" and (AUTHORIZATION_REQUIRED in check.detail or CREDENTIALS_REFUSED in check.detail) for check in self.checks)

    @property
    def credentials_refused(self) -> bool:
        """The server answered 401 to the credentials the suite sent (`--header Authorization`)."""
        return any(check.verdict == "not_testable" and CREDENTIALS_REFUSED in check.detail for check in self.checks)

    @property
    def passed(self) -> bool:
        """No MUST failed and no check errored (warnings, notes and non-applicable checks do not count), and the checks
        were not left untested for want of credentials."""
        if self.legacy_verdict is not None or self.authorization_required:
            return False
        return all(check.verdict not in ("fail", "error") for check in self.checks) and any(c.verdict == "pass" for c in self.checks)

    @property
    def warnings(self) -> tuple[CheckReport, ...]:
        return tuple(check for check in self.checks if check.verdict == "warn")

    def passed_strictly(self) -> bool:
        """`passed`, and no SHOULD failed either (`--strict`)."""
        return self.passed and not self.warnings


ProgressCallback = Callable[[int, int], None]
DISCOVER_CHECK = "discover.responds"  # the rule a server that answers nothing breaks first (Servers MUST implement server/discover)


async def run_suite(
    target: Target,
    *,
    runs: int = 5,
    limits: Limits | None = None,
    tool_policy: ToolPolicy = "readonly",
    deadline_s: float = 120.0,
    only: Callable[[Check], bool] | None = None,
    concurrent_runs: bool = True,
    foreign_token: str | None = None,
) -> SuiteReport:
    """Run the suite; raises TargetError only when the server cannot be reached or started at all.

    Over HTTP the runs go side by side (`concurrent_runs`); each run's checks go one after another. `foreign_token`
    (a secret) is a token issued for another resource, which a protected server must refuse.
    """
    if runs < 1:
        raise ValueError("runs must be at least 1")
    limits = limits or Limits()
    checks = [c for c in all_checks() if only is None or only(c)]
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    outcomes: dict[str, list[Verdict]] = {check.id: [] for check in checks}
    fingerprint = server_name = None
    notes: list[str] = []
    transport = target.open(limits)
    client = McpClient(transport, limits=limits)
    profile: EraProfile | None = None
    try:
        async with asyncio.timeout(deadline_s):
            profile = await detect_era(client, limits)
            first = profile.discover
            if first.failure is not None and first.failure.kind in ("connect", "closed") and not profile.legacy_versions:
                raise TargetError(f"cannot reach {target}: {first.failure.detail}")
            silence = _silence(profile)
            if profile.era == "legacy-only":
                runs_to_do = 0
                server_name = next((p.server_info for p in profile.legacy if p.server_info), None)
            elif silence is not None:
                # Dead for the run: one timeout is the whole cost, not one per check and run.
                runs_to_do = 0
                notes.append(f"the server did not answer its first request ({silence}): the other checks are not testable, and no further run was started")
                for check in checks:
                    outcomes[check.id].append(_unanswered(check, silence, is_http=target.transport == "http", era=profile.era))
            else:
                runs_to_do = runs
            contexts = [
                RunContext(client, tool_policy, profile, first_discover=first if i == 0 else None, foreign_token=foreign_token) for i in range(runs_to_do)
            ]
            if target.transport == "http" and concurrent_runs:
                # Stateless HTTP: the runs share nothing, so they overlap (one pipe serialises stdio anyway). A run
                # that ends early gives its verdicts at once, so the deadline fails only what was not judged.
                pending = [asyncio.ensure_future(_run_checks(checks, ctx)) for ctx in contexts]
                try:
                    for future in asyncio.as_completed(pending):
                        _, run_verdicts = await future
                        for check in checks:
                            outcomes[check.id].append(run_verdicts[check.id])
                finally:
                    for future in pending:
                        future.cancel()
            else:
                for ctx in contexts:
                    _, run_verdicts = await _run_checks(checks, ctx)
                    for check in checks:
                        outcomes[check.id].append(run_verdicts[check.id])
            for ctx in contexts:
                discover = await ctx.discover()
                if discover.failure is None:
                    fingerprint = server_fingerprint(discover.result, await ctx.tools())
                    server_name = _server_name(discover.result)
                    break
    except TimeoutError:
        notes.append(f"suite deadline of {deadline_s:g}s reached; checks not run in time are failed")
        for verdicts in outcomes.values():
            verdicts.extend(Verdict("fail", f"not run: suite deadline of {deadline_s:g}s reached") for _ in range(runs - len(verdicts)))
    finally:
        await client.aclose()
    legacy_only = profile is not None and profile.era == "legacy-only"
    reports = () if legacy_only else tuple(_reduce(check, outcomes[check.id], len(outcomes[check.id]) or runs) for check in checks)
    return SuiteReport(
        target=str(target),
        transport=target.transport,
        runs=runs,
        tool_policy=tool_policy,
        started_at=started_at,
        duration_s=time.perf_counter() - started,
        server_fingerprint=fingerprint,
        server_name=server_name,
        checks=reports,
        notes=tuple(notes),
        era=profile.era if profile is not None else "modern-only",
        era_summary=profile.summary() if profile is not None else "era: not determined (suite deadline reached first)",
        legacy_verdict=profile.legacy_verdict() if legacy_only and profile is not None else None,
    )


# What a first request's failure says about the server: it answered nothing usable at all (as opposed to answering
# with an HTTP status or a JSON-RPC error, which the checks can still judge).
SILENT_FAILURES: frozenset[str] = frozenset({"timeout", "closed", "bad_json", "too_large", "stream_cut"})


def _silence(profile: EraProfile) -> str | None:
    """What the first request got when the server answered nothing usable (to discover nor to a legacy initialize), else None."""
    discover = profile.discover
    if discover.response is not None or discover.failure is None or discover.failure.kind not in SILENT_FAILURES:
        return None
    if any(probe.accepted for probe in profile.legacy):
        return None
    return f"server/discover: {discover.failure}"


def _unanswered(check: Check, silence: str, *, is_http: bool, era: Era) -> Verdict:
    """A check's one verdict when the server answered nothing: server/discover fails, the rest are not testable."""
    if check.http_only and not is_http:
        return Verdict("not_applicable", "HTTP only; not applicable over stdio")
    if era not in check.eras:
        return Verdict("not_applicable", f"the rule is for {' and '.join(check.eras)} servers; this one is {era}")
    if check.id == DISCOVER_CHECK:
        return Verdict("fail", f"the server did not answer: {silence}")
    return Verdict("not_testable", f"not testable: the server did not answer ({silence})")


async def _run_checks(checks: Sequence[Check], ctx: RunContext) -> tuple[Exchange, dict[str, Verdict]]:
    """One run: server/discover, then every check in order (scans last: they judge what the others sent)."""
    discover = await ctx.discover()
    if discover.status == 401 and ctx.is_http:
        # Protected, and run without credentials (or with ones it refused): only the authorization checks can judge anything.
        verdicts = {}
        for check in checks:
            authorization = check.family == "authorization"
            verdicts[check.id] = await _run_one(check, ctx) if authorization else _needs_credentials(check, ctx, discover)
        return discover, verdicts
    if discover.failure is not None:
        return discover, {check.id: Verdict("fail", f"server did not answer server/discover: {discover.failure}") for check in checks}
    verdicts = {}
    for check in sorted(checks, key=lambda c: c.scan):
        verdicts[check.id] = await _run_one(check, ctx)
    return discover, verdicts


AUTHORIZATION_REQUIRED = "the server requires authorization"
CREDENTIALS_REFUSED = "the server refused the credentials given"


def _needs_credentials(check: Check, ctx: RunContext, discover: Exchange) -> Verdict:
    if ctx.era not in check.eras:
        return Verdict("not_applicable", f"the rule is for {' and '.join(check.eras)} servers; this one is {ctx.era}")
    said = discover.header("WWW-Authenticate")
    answer = f"server/discover: HTTP 401{f', WWW-Authenticate: {said}' if said else ''}"
    if ctx.sends_authorization:
        return Verdict(
            "not_testable",
            f"not testable: {CREDENTIALS_REFUSED} (the --header Authorization; {answer}); check that the token is valid, unexpired and issued for this server",
        )
    return Verdict(
        "not_testable",
        f"not testable: {AUTHORIZATION_REQUIRED} (server/discover: HTTP 401{f', WWW-Authenticate: {said}' if said else ''}); "
        "run with --header 'Authorization: Bearer ...' to check it authenticated",
    )


async def _run_one(check: Check, ctx: RunContext) -> Verdict:
    if check.http_only and not ctx.is_http:
        return Verdict("not_applicable", "HTTP only; not applicable over stdio")
    if ctx.era not in check.eras:
        return Verdict("not_applicable", f"the rule is for {' and '.join(check.eras)} servers; this one is {ctx.era}")
    try:
        return await check.function(ctx)
    except Exception as exc:  # a bug in the harness, not a server defect: say so plainly
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return Verdict("error", f"harness error in {check.id} ({type(exc).__name__}: {exc} at {frame.filename}:{frame.lineno}); please report it")


FAILURE_AT_LEVEL: dict[str, Outcome] = {"MUST": "fail", "SHOULD": "warn", "MAY": "info"}
SENDER_RULE = "the sentence binds the request's sender, not the server, so this is a warning, not a failure"


def _failure_outcome(check: Check) -> Outcome:
    """What a failed run of `check` counts as: its level's word, and never more than a warning for a rule binding the sender."""
    outcome = FAILURE_AT_LEVEL[check.level]
    return "warn" if check.binds != "server" and outcome == "fail" else outcome


def _reduce(check: Check, verdicts: list[Verdict], runs: int) -> CheckReport:
    judged = [v for v in verdicts if v.outcome not in NOT_JUDGED]
    passes = sum(1 for v in judged if v.outcome == "pass")
    bad = next((v for v in judged if v.outcome in ("error", "fail")), None)
    if not judged:
        verdict: Outcome = verdicts[0].outcome if verdicts else "not_applicable"
        detail = verdicts[0].detail if verdicts else "not run"
    elif bad is not None:
        failure: Outcome = "error" if any(v.outcome == "error" for v in judged) else "fail"
        bad = next(v for v in judged if v.outcome == failure)
        verdict = "error" if failure == "error" else _failure_outcome(check)
        detail = bad.detail if len(judged) - passes == len(judged) else f"{bad.detail} (failed {len(judged) - passes} of {len(judged)} runs)"
        if verdict == "warn" and check.level == "MUST":
            detail = f"{detail} ({SENDER_RULE})"
    else:
        verdict, detail = "pass", judged[-1].detail
    tally = len(judged) if judged else runs
    return CheckReport(check.id, check.family, check.title, check.spec, check.level, passes, tally, verdict, detail, check.quote, check.eras, check.binds)


def _server_name(discover_result: dict[str, object] | None) -> str | None:
    meta = (discover_result or {}).get("_meta")
    info = meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        return f"{info['name']} {info.get('version', '')}".strip()
    return None
