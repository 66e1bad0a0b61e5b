"""Orchestration output: a conformance report as JSON, JUnit XML and a terminal table.

The JSON and the JUnit XML are the report's serialisations: both return through `evalcore.records.published`, so
no secret (a key, a `--header` value a server echoed into a check's detail) is in them, whoever writes them.
The table is printed, and what a command prints is redacted on its way out (`evalcore.redaction`).
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.conformance.runner import CheckReport, SuiteReport

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from evalcore.conformance.requirement_view import RequirementView

# The serialisations import what they need when called: a run that only prints its table loads neither an XML
# library nor the records module.

VERDICT_LABEL = {"pass": "PASS", "fail": "FAIL", "warn": "WARN", "info": "note", "error": "ERROR", "not_applicable": "n/a", "not_testable": "untested"}
REASON_INDENT = "    "  # a whole reason, wrapped under its row
# Exit codes of `evalcore conformance` (docs/conformance.md "Exit codes").
EXIT_CONFORMANT, EXIT_NOT_CONFORMANT, EXIT_LEGACY_ONLY = 0, 1, 3


def exit_code(report: SuiteReport, *, strict: bool = False) -> int:
    """0 conformant; 1 a MUST failed or a check errored (or, with `strict`, a SHOULD failed); 3 legacy-only server."""
    if report.legacy_verdict is not None:
        return EXIT_LEGACY_ONLY
    ok = report.passed_strictly() if strict else report.passed
    return EXIT_CONFORMANT if ok else EXIT_NOT_CONFORMANT


def to_json(report: SuiteReport, requirements: RequirementView | None = None) -> dict[str, Any]:
    """The report; with `requirements` (`--requirements REVISION`), also its verdict per official scenario."""
    from evalcore.records import published

    document = _json(report)
    if requirements is not None:
        from evalcore.conformance.requirement_view import to_json as requirements_json

        document |= requirements_json(requirements)
    return published(document)


def _json(report: SuiteReport) -> dict[str, Any]:
    return {
        "target": report.target,
        "transport": report.transport,
        "protocolVersion": report.protocol_version,
        "era": report.era,
        "eraSummary": report.era_summary,
        "legacyVerdict": report.legacy_verdict,
        "runs": report.runs,
        "passed": report.passed,
        "passedStrict": report.passed_strictly(),
        "warnings": len(report.warnings),
        "toolPolicy": report.tool_policy,
        "startedAt": report.started_at.isoformat(),
        "durationSeconds": round(report.duration_s, 3),
        "server": {"name": report.server_name, "fingerprint": report.server_fingerprint},
        "evalcoreVersion": report.evalcore_version,
        "notes": list(report.notes),
        "checks": [
            {
                "id": c.id,
                "family": c.family,
                "title": c.title,
                "spec": c.spec,
                "level": c.level,
                "quote": c.quote,
                "eras": list(c.eras),
                "binds": c.binds,
                "passes": c.passes,
                "runs": c.runs,
                "passed": c.passed,
                "verdict": c.verdict,
                "detail": c.detail,
            }
            for c in report.checks
        ],
    }


def write_json(report: SuiteReport, path: Path, requirements: RequirementView | None = None) -> None:
    _write(path, json.dumps(to_json(report, requirements), indent=2) + "\n")


def to_junit(report: SuiteReport, requirements: RequirementView | None = None) -> ET.ElementTree:
    """The checks as one JUnit testsuite; with `requirements`, `<testsuites>` holding it and one testcase per official scenario."""
    import xml.etree.ElementTree as ET

    suite = ET.Element(
        "testsuite",
        name="mcp-conformance-2026-07-28",
        tests=str(len(report.checks)),
        failures=str(sum(c.verdict == "fail" for c in report.checks)),
        errors=str(sum(c.verdict == "error" for c in report.checks)),
        skipped=str(sum(c.verdict in ("not_applicable", "not_testable") for c in report.checks)),
        time=f"{report.duration_s:.3f}",
        timestamp=report.started_at.isoformat(),
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="target", value=report.target)
    ET.SubElement(properties, "property", name="era", value=report.era)
    for check in report.checks:
        case = ET.SubElement(suite, "testcase", classname=f"conformance.{check.family}", name=check.id)
        message = f"{check.passes}/{check.runs}: {check.detail}"
        if check.verdict in ("fail", "error"):
            ET.SubElement(case, "failure" if check.verdict == "fail" else "error", message=message).text = f"{check.title}\nspec: {check.spec}\n{message}"
        elif check.verdict in ("not_applicable", "not_testable"):
            ET.SubElement(case, "skipped", message=check.detail)
        elif check.verdict in ("warn", "info"):
            ET.SubElement(case, "system-out").text = f"{check.level} not met: {message}"
    if requirements is None:
        return ET.ElementTree(suite)
    both = ET.Element("testsuites")
    both.extend([suite, _requirements_suite(requirements)])
    return ET.ElementTree(both)


def _requirements_suite(view: RequirementView) -> ET.Element:
    """Official scenario by scenario: a failure where a check deciding it failed, skipped where nothing of ours judged it whole."""
    import xml.etree.ElementTree as ET

    revision = view.requirement_set.revision
    judged_whole = {"pass", "warn", "info"}
    suite = ET.Element(
        "testsuite",
        name=f"mcp-requirements-{revision}",
        tests=str(len(view.scenarios)),
        failures=str(sum(s.verdict == "fail" for s in view.scenarios)),
        errors=str(sum(s.verdict == "error" for s in view.scenarios)),
        skipped=str(sum(s.verdict not in judged_whole | {"fail", "error"} for s in view.scenarios)),
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="source", value=view.requirement_set.source)
    for scenario in view.scenarios:
        requirement = scenario.requirement
        kind = "scored" if requirement.scored else f"not scored ({requirement.reason})"
        case = ET.SubElement(suite, "testcase", classname=f"requirements.{revision}", name=requirement.id)
        decided = ", ".join(f"{check_id}: {verdict}" for check_id, verdict in scenario.checks) or "no check ran"
        message = f"{kind}; coverage {requirement.coverage}; {decided}"
        if scenario.verdict in ("fail", "error"):
            ET.SubElement(case, "failure" if scenario.verdict == "fail" else "error", message=message).text = requirement.note
        elif scenario.verdict not in judged_whole:
            ET.SubElement(case, "skipped", message=f"{scenario.verdict.replace('_', ' ')}: {message}").text = requirement.note
        else:
            ET.SubElement(case, "system-out").text = f"{scenario.verdict}: {message}"
    return suite


def junit_xml(report: SuiteReport, requirements: RequirementView | None = None) -> str:
    """The JUnit XML text, published."""
    import xml.etree.ElementTree as ET

    from evalcore.records import published

    root = to_junit(report, requirements).getroot()
    assert root is not None
    ET.indent(root)
    return published(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")


def write_junit(report: SuiteReport, path: Path, requirements: RequirementView | None = None) -> None:
    _write(path, junit_xml(report, requirements))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def render_table(report: SuiteReport, width: int | None = None, *, full_reasons: bool = False) -> str:
    """The human summary: the era first, one row per check, SHOULD warnings apart, then a verdict line.

    A reason longer than the row's room is cut with "…" on a terminal; with `full_reasons` (stdout is a file or a
    CI log, where reasons are read) it is printed whole, wrapped, on the lines under its row.
    """
    width = width or shutil.get_terminal_size((120, 20)).columns
    head = f"MCP conformance ({report.protocol_version}) for {report.target}" + (f" — {report.server_name}" if report.server_name else "")
    lines = [f"{head} — {report.era_summary or 'era: ' + report.era}"]
    if report.legacy_verdict is not None:
        lines.append(f"LEGACY ONLY: {report.legacy_verdict} — {report.duration_s:.2f}s")
        return "\n".join(lines)
    lines.append(f"{report.runs} runs per check, hard gate at {report.runs}/{report.runs}; tools called: {report.tool_policy}")
    lines.append("")
    id_width = max(len(c.id) for c in report.checks) if report.checks else 10
    lines.append(f"{'check':<{id_width}}  {'level':<6}  {'passes':>7}  {'verdict':<8}  reason")

    def row(check: CheckReport) -> str:
        tally = "—" if check.verdict in ("not_applicable", "not_testable") else f"{check.passes}/{check.runs}"
        prefix = f"{check.id:<{id_width}}  {check.level:<6}  {tally:>7}  {VERDICT_LABEL[check.verdict]:<8}  "
        reason = " ".join(check.detail.split())
        room = max(20, width - len(prefix))
        if len(reason) <= room:
            return prefix + reason
        if not full_reasons:
            return prefix + reason[: room - 1] + "…"
        wrapped = textwrap.wrap(reason, width=max(40, width - len(REASON_INDENT)), break_long_words=False, break_on_hyphens=False)
        return prefix.rstrip() + "\n" + "\n".join(REASON_INDENT + line for line in wrapped)

    lines.extend(row(check) for check in report.checks if check.verdict not in ("warn", "info"))
    for verdict, title in (("warn", "SHOULD not met (warnings; they fail the suite only with --strict):"), ("info", "MAY not taken (notes, never failures):")):
        apart = [check for check in report.checks if check.verdict == verdict]
        if apart:
            lines.extend(["", title])
            lines.extend(row(check) for check in apart)
    counts = {v: sum(c.verdict == v for c in report.checks) for v in VERDICT_LABEL}
    lines.append("")
    lines.extend(f"note: {note}" for note in report.notes)
    summary = (
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors, {counts['warn']} warnings, "
        f"{counts['not_applicable']} not applicable, {counts['not_testable']} not testable — {report.duration_s:.2f}s"
    )
    if report.credentials_refused:
        verdict = "NOT JUDGED (the server refused the credentials given in --header Authorization; check the token): "
    elif report.authorization_required:
        verdict = "NOT JUDGED (the server requires authorization; run with --header 'Authorization: Bearer ...'): "
    else:
        verdict = "CONFORMANT: " if report.passed else "NOT CONFORMANT: "
    lines.append(verdict + summary)
    return "\n".join(lines)
