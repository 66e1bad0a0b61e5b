"""Command: `python -m evalcore ci-summary` — a report as Markdown for the CI runner: the step summary, outputs, a PR comment.

It reads the JSON a command already wrote (`conformance --json`, `run --out`) and judges nothing itself:
the verdict shown is the report's. Its exit code says only whether it could write (0, or 2 with a reason).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalcore.commands.options import db_option
from evalcore.errors import ConfigError, StoreError

NAME = "ci-summary"
SUMMARY = "show a conformance or behaviour report in CI: step summary, step outputs, a PR-comment body"
ORDER = 100


def add_arguments(parser: argparse.ArgumentParser) -> None:
    report = parser.add_mutually_exclusive_group(required=True)
    report.add_argument("--conformance", type=Path, metavar="PATH", help="a report `conformance --json` wrote")
    report.add_argument("--behaviour", type=Path, metavar="PATH", help="a report `run --out` wrote")
    db_option(parser, "store holding the last green run the behaviour run was gated against")
    parser.add_argument("--strict", action="store_true", help="conformance: the run was strict (SHOULD warnings fail it too), as `conformance --strict`")
    parser.add_argument("--comment", type=Path, metavar="PATH", help="behaviour: also write the PR-comment body (the delta against the last green run) here")


def command(args: argparse.Namespace) -> int:
    from evalcore.ci.annotations import behaviour_annotations, conformance_annotations
    from evalcore.ci.github import Runner
    from evalcore.ci.markdown import behaviour_comment, conformance_summary

    runner = Runner.from_environment()
    if args.conformance is not None:
        if args.comment is not None:
            raise ConfigError("--comment goes with --behaviour (a behaviour run's delta); a conformance run has its step summary")
        report = _read_json(args.conformance, "conformance --json")
        if not isinstance(report.get("checks"), list) or "passed" not in report:
            raise ConfigError(f"{args.conformance}: not a conformance report (written by `evalcore conformance --json`)")
        runner.write_summary(conformance_summary(report, strict=args.strict), sys.stdout)
        passed = report.get("passedStrict", report["passed"]) if args.strict else report["passed"]
        verdict = "legacy-only" if report.get("legacyVerdict") is not None else "conformant" if passed is True else "not-conformant"
        for annotation in conformance_annotations(report, strict=args.strict):
            runner.annotate(sys.stdout, annotation.message, title=annotation.title, level=annotation.level)
        runner.set_outputs({"verdict": verdict, "passed": _flag(verdict == "conformant")})
        return 0
    if args.strict:
        raise ConfigError("--strict goes with --conformance (a strict conformance run); a behaviour run has its gate")
    from evalcore.scoring.gate import validate_report

    report = validate_report(_read_json(args.behaviour, "run --out"), str(args.behaviour))
    body = behaviour_comment(report, _baseline_report(args.db, report.get("baseline")), revision=runner.revision())
    runner.write_summary(body, sys.stdout)
    if args.comment is not None:
        args.comment.parent.mkdir(parents=True, exist_ok=True)
        args.comment.write_text(body, encoding="utf-8")
    for annotation in behaviour_annotations(report):
        runner.annotate(sys.stdout, annotation.message, title=annotation.title, level=annotation.level)
    passed = report.get("passed") is True
    outputs = {"passed": _flag(passed), "run-id": str(report.get("runId", ""))}
    if args.comment is not None:
        outputs["comment"] = str(args.comment)
    number = runner.pull_request()
    if number is not None:
        outputs["pull-request"] = str(number)
    runner.set_outputs(outputs)
    return 0


def _baseline_report(db: Path, run_id: Any) -> dict[str, Any] | None:
    """The stored report of the green run the gate compared with; None when there was none (or the store lost it)."""
    if not isinstance(run_id, str):
        return None
    from evalcore.store.behaviour import load_run

    try:
        stored = load_run(db, run_id).get("report_json")
    except StoreError:
        return None
    return json.loads(stored) if isinstance(stored, str) else None


def _read_json(path: Path, writer: str) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the report ({exc.strerror}); `evalcore {writer}` writes it") from exc
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc}); pass the file `evalcore {writer}` wrote") from exc
    if not isinstance(report, dict):
        raise ConfigError(f"{path}: a report is a JSON object, got {type(report).__name__}")
    return report


def _flag(value: bool) -> str:
    return "true" if value else "false"
