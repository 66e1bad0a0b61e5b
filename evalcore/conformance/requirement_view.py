"""Orchestration output: a conformance run seen through the official suite's requirement set, scenario by scenario.

Each official scenario gets a verdict from the verdicts of the checks the map names for it (the checks decide;
nothing here judges the server again, and the suite's own verdict and exit code are untouched):

- `missing`: no check of ours covers the scenario;
- `beyond_spec`: the scenario asks more than the spec's words (the note quotes them): reported, never enforced;
- `not_run`: it is covered, but none of its checks ran (`--only`, a legacy-only server);
- otherwise the worst verdict of its checks that ran: error, fail (a MUST), warn (a SHOULD), info (a MAY);
  then, when at least one check passed, pass if every check of the scenario ran and none was not testable, else
  `partial` (say, the MRTR round trip of a server with no tool that asks for input: its results are well formed,
  the round trip untried);
  else not_testable, else not_applicable.

No false green: one failing check fails the scenario, a scenario only part of whose checks could judge anything
reads `partial`, and one none of whose checks could never reads as passed.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcore.conformance.requirements import Requirement, RequirementSet
from evalcore.conformance.runner import SuiteReport

# Worst first: the first verdict found among a scenario's checks is the scenario's.
PRECEDENCE: tuple[str, ...] = ("error", "fail", "warn", "info", "pass", "not_testable", "not_applicable")
PARTIAL = "partial"  # some checks passed, others could not be tested on this server
LABEL = {
    "pass": "PASS",
    "partial": "partly",
    "fail": "FAIL",
    "warn": "WARN",
    "info": "note",
    "error": "ERROR",
    "not_applicable": "n/a",
    "not_testable": "untested",
    "not_run": "not run",
    "missing": "missing",
    "beyond_spec": "beyond spec",
}


@dataclass(frozen=True)
class ScenarioVerdict:
    requirement: Requirement
    verdict: str  # a check verdict (see PRECEDENCE), "partial", "not_run", "missing" or "beyond_spec"
    checks: tuple[tuple[str, str], ...]  # (check id, its verdict) for the scenario's checks that ran, in map order


@dataclass(frozen=True)
class RequirementView:
    requirement_set: RequirementSet
    scenarios: tuple[ScenarioVerdict, ...]

    def counts(self, *, scored: bool) -> dict[str, int]:
        """How many scenarios (scored, or not scored) got each verdict, and how many are covered at all."""
        chosen = [s for s in self.scenarios if s.requirement.scored == scored]
        counts = {verdict: sum(s.verdict == verdict for s in chosen) for verdict in LABEL}
        counts["total"] = len(chosen)
        counts["covered"] = sum(s.requirement.coverage not in ("missing", "beyond-spec") for s in chosen)
        return counts


def judge(requirement_set: RequirementSet, report: SuiteReport | Mapping[str, str]) -> RequirementView:
    """The verdict per official scenario of a run (its report, or {check id: verdict} as the store keeps them)."""
    verdicts = {check.id: check.verdict for check in report.checks} if isinstance(report, SuiteReport) else dict(report)
    scenarios = []
    for requirement in requirement_set.requirements:
        ran = tuple((check_id, verdicts[check_id]) for check_id in requirement.checks if check_id in verdicts)
        if requirement.coverage == "missing":
            verdict = "missing"
        elif requirement.coverage == "beyond-spec":
            verdict = "beyond_spec"
        elif not ran:
            verdict = "not_run"
        else:
            found = {v for _, v in ran}
            verdict = next(v for v in PRECEDENCE if v in found)
            if verdict == "pass" and ("not_testable" in found or len(ran) < len(requirement.checks)):
                verdict = PARTIAL  # some of its checks could not test it, or did not run (--only)
        scenarios.append(ScenarioVerdict(requirement, verdict, ran))
    return RequirementView(requirement_set, tuple(scenarios))


def to_json(view: RequirementView) -> dict[str, Any]:
    """The `requirementSet` and `requirements` members of the JSON report."""
    return {
        "requirementSet": {
            "revision": view.requirement_set.revision,
            "source": view.requirement_set.source,
            "scored": view.counts(scored=True),
            "notScored": view.counts(scored=False),
        },
        "requirements": [
            {
                "id": s.requirement.id,
                "leg": s.requirement.leg,
                "scored": s.requirement.scored,
                "notScoredReason": s.requirement.reason or None,
                "coverage": s.requirement.coverage,
                "verdict": s.verdict,
                "checks": [{"id": check_id, "verdict": verdict} for check_id, verdict in s.checks],
                "mappedChecks": list(s.requirement.checks),
                "note": s.requirement.note,
            }
            for s in view.scenarios
        ],
    }


def render(view: RequirementView, width: int | None = None, *, whole_rows: bool = False) -> str:
    """One row per official scenario: scored or why not, coverage, verdict, and the checks that decided a non-pass.

    A row longer than the terminal is cut with "…"; with `whole_rows` (stdout is a file or a CI log) it is printed whole.
    """
    width = width or shutil.get_terminal_size((120, 20)).columns
    lines = [f"Official requirement set {view.requirement_set.revision} ({view.requirement_set.source}), server scenarios:"]
    id_width = max(len(s.requirement.id) for s in view.scenarios)
    lines.append(f"{'scenario':<{id_width}}  {'scored':<11}  {'coverage':<11}  {'verdict':<8}  decided by")
    for s in view.scenarios:
        scored = "scored" if s.requirement.scored else s.requirement.reason or "not scored"
        if s.verdict == "missing":
            decided = "no check (see the note in --json)"
        elif s.verdict == "beyond_spec":
            decided = "asks more than the spec (the note in --json quotes it); not enforced"
        elif s.verdict == "not_run":
            decided = "none of " + ", ".join(s.requirement.checks) + " ran"
        else:
            worst = [check_id for check_id, verdict in s.checks if verdict == s.verdict]
            if s.verdict == PARTIAL:
                untested = [check_id for check_id, verdict in s.checks if verdict == "not_testable"]
                decided = "passed: " + ", ".join(c for c, v in s.checks if v == "pass") + "; not testable: " + ", ".join(untested)
            else:
                decided = ", ".join(worst) if s.verdict != "pass" else ", ".join(check_id for check_id, _ in s.checks)
        row = f"{s.requirement.id:<{id_width}}  {scored:<11}  {s.requirement.coverage:<11}  {LABEL[s.verdict]:<8}  {decided}"
        lines.append(row if whole_rows or len(row) <= width else row[: width - 1] + "…")
    lines.append("")
    for title in ("scored", "not scored"):
        n = view.counts(scored=title == "scored")
        lines.append(
            f"{title}: {n['total']} scenarios, {n['covered']} covered — {n['pass']} passed, {n['partial']} partly tested, {n['fail'] + n['error']} failed, "
            f"{n['warn']} warned, {n['info']} notes, {n['not_testable'] + n['not_applicable']} not testable, {n['not_run']} not run, "
            f"{n['beyond_spec']} beyond the spec, {n['missing']} missing"
        )
    return "\n".join(lines)
