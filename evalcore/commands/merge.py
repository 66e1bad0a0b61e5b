"""Command: `python -m evalcore merge` — join the shard files of one plan (`run --shard`) into one stored run and its report."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalcore.commands.options import db_option

NAME = "merge"
SUMMARY = "join the shard files of one sharded run (run --shard I/K) into one stored run, its metrics and gate computed once"
ORDER = 25


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="the shards' Parquet files, e.g. shards/*.parquet (every shard of one plan once)")
    db_option(parser, "DuckDB store the merged run goes to")
    parser.add_argument("--out", type=Path, metavar="PATH", help="write the JSON report here (as `evalcore run --out`)")
    parser.add_argument("--golden", type=Path, metavar="PATH", help="the golden set the shards ran, when it is not where they found it (checked by its hash)")
    parser.add_argument(
        "--golden-limit",
        action="append",
        default=[],
        metavar="NAME=N",
        help="raise or lower a golden-file limit for reading --golden, as `run` takes it (docs/golden.md); repeatable",
    )
    parser.add_argument("--require-case-gates", action="store_true", help="also exit 1 when a case misses its gate (hard 5/5, soft 4/5)")


def command(args: argparse.Namespace) -> int:
    from evalcore.behaviour.merge import merge_run, read_plan
    from evalcore.commands.run import publish_report, show_report
    from evalcore.golden.limits import DEFAULT_LIMITS

    golden_limits = DEFAULT_LIMITS.with_overrides(args.golden_limit)
    merged = read_plan(args.files)  # every check before the store is touched: a refused merge stores nothing
    report = merge_run(merged, args.db, golden_path=args.golden, golden_limits=golden_limits)
    document = publish_report(args.db, report, args.out)
    show_report(document)
    failed = not document["passed"] or (args.require_case_gates and not document["caseGates"]["passed"])
    return 1 if failed else 0
