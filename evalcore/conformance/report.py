"""Orchestration output: a conformance report as JSON, JUnit XML and a terminal table."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from evalcore.conformance.runner import SuiteReport

VERDICT_LABEL = {"pass": "PASS", "fail": "FAIL", "skip": "skip", "error": "ERROR"}


def to_json(report: SuiteReport) -> dict[str, Any]:
    return {
        "target": report.target,
        "transport": report.transport,
        "protocolVersion": report.protocol_version,
        "runs": report.runs,
        "passed": report.passed,
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
                "passes": c.passes,
                "runs": c.runs,
                "passed": c.passed,
                "verdict": c.verdict,
                "detail": c.detail,
            }
            for c in report.checks
        ],
    }


def write_json(report: SuiteReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(report), indent=2) + "\n", encoding="utf-8")


def to_junit(report: SuiteReport) -> ET.ElementTree:
    suite = ET.Element(
        "testsuite",
        name="mcp-conformance-2026-07-28",
        tests=str(len(report.checks)),
        failures=str(sum(c.verdict == "fail" for c in report.checks)),
        errors=str(sum(c.verdict == "error" for c in report.checks)),
        skipped=str(sum(c.verdict == "skip" for c in report.checks)),
        time=f"{report.duration_s:.3f}",
        timestamp=report.started_at.isoformat(),
    )
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="target", value=report.target)
    for check in report.checks:
        case = ET.SubElement(suite, "testcase", classname=f"conformance.{check.family}", name=check.id)
        message = f"{check.passes}/{check.runs}: {check.detail}"
        if check.verdict in ("fail", "error"):
            ET.SubElement(case, "failure" if check.verdict == "fail" else "error", message=message).text = f"{check.title}\nspec: {check.spec}\n{message}"
        elif check.verdict == "skip":
            ET.SubElement(case, "skipped", message=check.detail)
    return ET.ElementTree(suite)


def write_junit(report: SuiteReport, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = to_junit(report)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def render_table(report: SuiteReport, width: int | None = None) -> str:
    """The human summary: one row per check, then a verdict line."""
    width = width or shutil.get_terminal_size((120, 20)).columns
    id_width = max(len(c.id) for c in report.checks) if report.checks else 10
    lines = [
        f"MCP conformance ({report.protocol_version}) for {report.target}" + (f" — {report.server_name}" if report.server_name else ""),
        f"{report.runs} runs per check, hard gate at {report.runs}/{report.runs}; tools called: {report.tool_policy}",
        "",
        f"{'check':<{id_width}}  {'passes':>7}  {'verdict':<7}  reason",
    ]
    for check in report.checks:
        tally = "—" if check.verdict == "skip" else f"{check.passes}/{check.runs}"
        prefix = f"{check.id:<{id_width}}  {tally:>7}  {VERDICT_LABEL[check.verdict]:<7}  "
        reason = " ".join(check.detail.split())
        room = max(20, width - len(prefix))
        lines.append(prefix + (reason if len(reason) <= room else reason[: room - 1] + "…"))
    counts = {v: sum(c.verdict == v for c in report.checks) for v in VERDICT_LABEL}
    lines.append("")
    lines.extend(f"note: {note}" for note in report.notes)
    summary = f"{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors, {counts['skip']} not applicable — {report.duration_s:.2f}s"
    lines.append(("CONFORMANT: " if report.passed else "NOT CONFORMANT: ") + summary)
    return "\n".join(lines)
