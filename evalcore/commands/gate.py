"""Command: `python -m evalcore gate` — compare a behaviour report with a baseline; exit 1 on a drop beyond the bound, an
incomplete run, or no baseline to compare with."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from evalcore.commands.options import db_option
from evalcore.errors import ConfigError

NAME = "gate"
SUMMARY = "fail when a behaviour report dropped more than --max-drop below a baseline"
ORDER = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", type=Path, required=True, metavar="PATH", help="the behaviour report to judge")
    parser.add_argument("--baseline", default="last-green", metavar="PATH|last-green", help="a baseline report file, or last-green from the store")
    parser.add_argument("--max-drop", type=float, default=0.02, help="largest tolerated drop of a metric (default 0.02)")
    db_option(parser, "store that holds the last green run")


def _read_report(path: Path) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read report {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(report, dict) or report.get("kind") != "behaviour":
        raise ConfigError(f"{path} is not a behaviour report (written by `python -m evalcore run --out`)")
    return report


def command(args: argparse.Namespace) -> int:
    from evalcore.scoring.gate import compare_to_baseline, render_gate

    report = _read_report(args.report)
    if report.get("incomplete"):
        print(f"gate: FAIL, {args.report} is an incomplete run: {report['incomplete']['reason']}")
        return 1
    if args.baseline == "last-green":
        from evalcore.store.behaviour import last_green_report
        from evalcore.store.db import upgrade

        upgrade(args.db)
        golden = report["golden"]
        baseline = last_green_report(args.db, golden_path=golden["path"], golden_hash=golden.get("hash"), exclude_run=report.get("runId"))
        if baseline is None:
            green = (report.get("gate") or {}).get("green") is True
            verdict = "PASS: the report's own run is green and becomes the baseline" if green else "FAIL: nothing to compare with"
            content = " with this content (the golden set changed since its last baseline)" if _changed(args.db, report) else ""
            print(
                f"gate: no baseline yet: no green run of {golden['path']}{content} in {args.db}; {verdict}. A run becomes the baseline "
                "when it is complete and every case gate is met, or by `evalcore baseline accept RUN_ID`"
            )
            return 0 if green else 1
    else:
        baseline = _read_report(Path(args.baseline))
        if baseline.get("incomplete"):
            raise ConfigError(f"{args.baseline} is an incomplete run and cannot be a baseline: {baseline['incomplete']['reason']}")
    result = compare_to_baseline(report, baseline, args.max_drop)
    print(render_gate(result))
    return 0 if result.passed else 1


def _changed(db: Path, report: dict[str, Any]) -> bool:
    """Whether the golden set's path has a baseline made from other content."""
    from evalcore.store.behaviour import changed_golden_baseline

    golden = report["golden"]
    if not golden.get("hash"):
        return False
    return changed_golden_baseline(db, golden_path=golden["path"], golden_hash=golden["hash"], exclude_run=report.get("runId")) is not None
