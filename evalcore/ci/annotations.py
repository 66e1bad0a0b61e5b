"""Output layer: the annotations a failed report earns on a GitHub run (level, title, message), as pure data.

Every failure gets one: a NOT CONFORMANT (or LEGACY ONLY) verdict or a red behaviour gate an `error` with the
reason, and each failing conformance check an `error` titled with its id, its detail the message. Text from a
server is flattened to one line and cut; `Runner.annotate` escapes it into a workflow command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

MAX_MESSAGE_CHARS: Final = 500
MAX_CHECK_ANNOTATIONS: Final = 20  # GitHub shows at most 10 errors per step; the rest are in the summary's table


@dataclass(frozen=True)
class Annotation:
    level: str  # error, warning or notice
    message: str
    title: str | None = None


def one_line(text: Any, limit: int = MAX_MESSAGE_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def conformance_annotations(report: Mapping[str, Any], *, strict: bool = False) -> list[Annotation]:
    """The verdict's error (none when conformant), then one per failing check: fail and error, and warn under strict."""
    if report.get("legacyVerdict") is not None:
        return [Annotation("error", one_line(f"evalcore: LEGACY ONLY: {report['legacyVerdict']}"))]
    checks: Sequence[Mapping[str, Any]] = report.get("checks") or []
    failing_verdicts = ("fail", "error", "warn") if strict else ("fail", "error")
    failing = [check for check in checks if check.get("verdict") in failing_verdicts]
    passed = report.get("passedStrict", report.get("passed")) if strict else report.get("passed")
    if passed is True:
        return []
    counts = {verdict: sum(check.get("verdict") == verdict for check in checks) for verdict in ("fail", "error", "warn")}
    tally = f"{counts['fail']} failed, {counts['error']} errors"
    if strict:
        tally += f", {counts['warn']} warnings (strict)"
    first = f"; first: {failing[0].get('id')}" if failing else ""
    revision = report.get("protocolVersion", "?")
    verdict = Annotation("error", one_line(f"evalcore: NOT CONFORMANT to {revision}: {tally}{first} (the step summary lists every check)"))
    per_check = [
        Annotation("error", one_line(f"{check.get('level', '?')} {check.get('verdict')}: {_reason(check)}"), one_line(check.get("id"), 200))
        for check in failing[:MAX_CHECK_ANNOTATIONS]
    ]
    return [verdict, *per_check]


def _reason(check: Mapping[str, Any]) -> str:
    return str(check.get("detail") or check.get("title") or "no detail")


def behaviour_annotations(report: Mapping[str, Any]) -> list[Annotation]:
    """An error with the gate's status and reason when the run did not pass; nothing when it did."""
    if report.get("passed") is True:
        return []
    gate = report.get("gate") or {}
    status = str(gate.get("status") or "fail").replace("_", " ").upper()
    reason = gate.get("reason") or "the run gate did not pass"
    return [Annotation("error", one_line(f"evalcore: {status}: {reason}"))]
