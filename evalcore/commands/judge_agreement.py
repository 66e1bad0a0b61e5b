"""Command: `python -m evalcore judge-agreement` — each judge's agreement with human labels, per rubric: n, raw agreement,
Cohen's κ with its 95% interval, TPR, TNR, the confusion counts and its status (docs/metrics.md, "Judge agreement")."""

from __future__ import annotations

import argparse
import json

from evalcore.commands.options import db_option, judge_threshold_options, judge_thresholds_from_args

NAME = "judge-agreement"
SUMMARY = "how far each judge agrees with human labels (Cohen's kappa with its interval) and whether it may gate"
ORDER = 57


def add_arguments(parser: argparse.ArgumentParser) -> None:
    db_option(parser, "DuckDB store")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    judge_threshold_options(parser)


def command(args: argparse.Namespace) -> int:
    from evalcore.scoring.agreement import agreements
    from evalcore.store.db import upgrade
    from evalcore.store.judge_labels import judges, labelled_verdicts

    upgrade(args.db)
    found = agreements(labelled_verdicts(args.db), judges(args.db), judge_thresholds_from_args(args))
    if args.json:
        print(json.dumps({"judges": [entry.to_json() for entry in found]}, indent=2))
        return 0
    if not found:
        print(f"no judged attempts in {args.db}; run with --judge MODEL, then label attempts (`evalcore labels import`, or the dashboard)")
        return 0
    print(f"{'judge':<24} {'rubric':<12} {'n':>4} {'agree':>6} {'kappa':>6} {'95% CI':>14} {'TPR':>5} {'TNR':>5}  {'JP/HP JP/HF JF/HP JF/HF':<23} status")
    for entry in found:
        counts = entry.confusion
        cells = f"{counts.judge_pass_human_pass}/{counts.judge_pass_human_fail}/{counts.judge_fail_human_pass}/{counts.judge_fail_human_fail}"
        interval = f"[{entry.kappa_ci[0]:.2f}, {entry.kappa_ci[1]:.2f}]" if entry.kappa_ci is not None else "undefined"
        print(
            f"{entry.model:<24} {entry.rubric_hash[:12]:<12} {entry.n:>4} {_rate(entry.agreement):>6} {_rate(entry.kappa):>6} {interval:>14} "
            f"{_rate(entry.tpr):>5} {_rate(entry.tnr):>5}  {cells:<23} {entry.status}: {entry.reason}"
        )
    return 0


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"
