"""Output layer: conformance and behaviour reports (their JSON, as the commands write it) rendered as GitHub Markdown.

Pure functions: a report in, Markdown text out. Text that came from a server or a
model (a check's detail, a case id from a golden file) is untrusted: `cell()`
escapes it so that it renders as text in a table cell, never as markup, a link
or HTML, and never breaks the table.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from evalcore.records import case_tally
from evalcore.scoring.registry import regression_metrics

MAX_CELL_CHARS: Final = 200
VERDICT_MARK: Final = {
    "pass": "✅ pass",
    "fail": "❌ FAIL",
    "error": "💥 ERROR",
    "warn": "⚠️ warn",
    "info": "ℹ️ note",
    "not_applicable": "n/a",
    "not_testable": "untested",
}
# Rows shown first, in this order (then the MUST checks nothing could test); passes and n/a fold away under a <details>.
_ATTENTION: Final = ("fail", "error", "warn", "info")
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]|~#!])")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def cell(text: Any, limit: int = MAX_CELL_CHARS) -> str:
    """One table cell of untrusted text: one line, at most `limit` characters, HTML and Markdown escaped."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(flat, quote=False))


def code(text: Any, limit: int = MAX_CELL_CHARS) -> str:
    """Untrusted text as an inline code span in a table cell: shown literally, so only a backtick or a pipe could break it."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return "`" + flat.replace("`", "'").replace("|", "\\|") + "`"


def prose(text: Any, limit: int = MAX_CELL_CHARS) -> str:
    """Untrusted prose whose `backticked` parts are commands (a gate's reason): those stay code spans, the rest is `cell`."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    # split() alternates: text, code, text, code, ..., text (a code span the cut opened stays text, escaped)
    parts = _CODE_SPAN.split(flat)
    return "".join(code(part) if index % 2 else _MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(part, quote=False)) for index, part in enumerate(parts))


def _needs_attention(check: Mapping[str, Any]) -> bool:
    return check.get("verdict") in _ATTENTION or (check.get("verdict") == "not_testable" and check.get("level") == "MUST")


def _attention_rank(check: Mapping[str, Any]) -> int:
    verdict = check.get("verdict")
    return _ATTENTION.index(verdict) if verdict in _ATTENTION else len(_ATTENTION)


def conformance_summary(report: Mapping[str, Any], *, strict: bool = False) -> str:
    """The step summary of a conformance run: the verdict, the era, then the checks that need attention, then the rest."""
    checks: Sequence[Mapping[str, Any]] = report.get("checks") or []
    target = cell(report.get("target", "?"))
    server = f" — {cell(report['server']['name'])}" if (report.get("server") or {}).get("name") else ""
    lines = [f"### MCP conformance ({cell(report.get('protocolVersion', '?'))}) of {target}{server}", ""]
    if report.get("legacyVerdict") is not None:
        lines += [f"**LEGACY ONLY**: {cell(report['legacyVerdict'])}", ""]
        return "\n".join(lines)
    counts = {verdict: sum(check.get("verdict") == verdict for check in checks) for verdict in VERDICT_MARK}
    passed = report.get("passedStrict", report.get("passed")) if strict else report.get("passed")
    verdict = "✅ **CONFORMANT**" if passed is True else "❌ **NOT CONFORMANT**"
    lines += [
        f"{verdict}: {counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors, {counts['warn']} warnings, "
        f"{counts['not_applicable']} not applicable, {counts['not_testable']} not testable",
        "",
        f"{cell(report.get('eraSummary') or 'era: ' + str(report.get('era', '?')))} · {report.get('runs', '?')} runs per check, "
        f"a check passes only at {report.get('runs', '?')}/{report.get('runs', '?')}",
        "",
    ]
    attention = sorted((c for c in checks if _needs_attention(c)), key=_attention_rank)
    rest = [c for c in checks if not _needs_attention(c)]
    if attention:
        lines += _check_table(attention) + [""]
    if rest:
        lines += [f"<details><summary>{len(rest)} checks passed or not applicable</summary>", "", *_check_table(rest), "", "</details>", ""]
    lines += [f"> note: {cell(note)}" for note in report.get("notes") or ()]
    return "\n".join(lines).rstrip() + "\n"


def _check_table(checks: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = ["| check | level | passes | verdict | reason |", "|---|---|---:|---|---|"]
    for check in checks:
        untested = check.get("verdict") in ("not_applicable", "not_testable")
        tally = "—" if untested else f"{check.get('passes')}/{check.get('runs')}"
        rows.append(
            f"| {code(check.get('id'))} | {cell(check.get('level'))} | {tally} | {VERDICT_MARK.get(check.get('verdict', ''), cell(check.get('verdict')))} "
            f"| {cell(check.get('detail', ''))} |"
        )
    return rows


def behaviour_comment(report: Mapping[str, Any], baseline: Mapping[str, Any] | None, *, revision: str | None = None) -> str:
    """A PR-comment body: the run gate's verdict and, per model, each gated metric against the last green run.

    `baseline` is the report of the green run `report["baseline"]` names (None: there was no earlier green run).
    The verdict is the report's own (`passed`, `incomplete`, `regressions`): this only shows it.
    """
    golden = cell((report.get("golden") or {}).get("path", "?"))
    about = f" at {cell(revision[:12])}" if revision else ""
    lines = [f"### evalcore behaviour run {code(report.get('runId', '?'))}{about}", "", f"Golden set {golden}, {report.get('runs', '?')} runs per case.", ""]
    gate = report.get("gate") or {}
    status, reason = gate.get("status"), prose(str(gate.get("reason") or ""), 400)
    if status == "incomplete":
        lines += [f"❌ **INCOMPLETE**: {reason}", ""]
    elif status == "no_baseline":
        lines += [f"{'✅ **PASS**' if gate.get('passed') else '❌ **NO BASELINE**'}: {reason}", ""]
    elif status == "pass":
        lines += [f"✅ **PASS**: {reason}", ""]
    else:
        lines += [f"❌ **FAIL**: {reason}", ""]
        for regression in report.get("regressions") or ():
            cases = ", ".join(code(case) for case in regression.get("cases", [])[:5]) or "no single case"
            change = f"{_pct(regression['baseline'])} → {_pct(regression['current'])}"
            lines.append(f"- {cell(regression['model'])}: {regression['metric']} {change} (cases whose pass rate fell: {cases})")
        lines.append("")
    lines += _delta_table(report, baseline)
    failing = (report.get("caseGates") or {}).get("failing") or []
    if failing:
        lines += ["", f"<details><summary>{len(failing)} cases below their gate</summary>", "", "| model | case | kind | passes |", "|---|---|---|---:|"]
        tallies = [case_tally(f["passes"], f["runs"], f.get("errored", 0)) for f in failing[:50]]
        lines += [f"| {cell(f['model'])} | {code(f['case'])} | {cell(f['kind'])} | {tally} |" for f, tally in zip(failing, tallies, strict=False)]
        lines += ["", "</details>"]
    return "\n".join(lines).rstrip() + "\n"


def _delta_table(report: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> list[str]:
    before = {entry["model"]: entry.get("metrics") or {} for entry in (baseline or {}).get("models") or ()}
    header = "| model | metric | last green | this run | change |"
    rows = [header, "|---|---|---:|---:|---:|"]
    for entry in report.get("models") or ():
        previous = before.get(entry["model"], {})
        for metric, direction in regression_metrics():
            now, then = (entry.get("metrics") or {}).get(metric), previous.get(metric)
            if now is None and then is None:
                continue
            rows.append(f"| {cell(entry['model'])} | {metric} | {_pct(then)} | {_pct(now)} | {_change(direction == 'lower', then, now)} |")
    return rows if len(rows) > 2 else []


def _change(lower_is_better: bool, then: float | None, now: float | None) -> str:
    if then is None or now is None:
        return "—"
    points = (now - then) * 100
    if abs(points) < 0.05:
        return "±0"
    better = points < 0 if lower_is_better else points > 0
    return f"{points:+.1f} pts ({'better' if better else 'worse'})"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"
