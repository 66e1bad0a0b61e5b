"""Command: `python -m evalcore baseline accept RUN_ID` — a complete run made the baseline of later runs of its golden set by hand."""

from __future__ import annotations

import argparse

from evalcore.commands.options import Parser, db_option

NAME = "baseline"
SUMMARY = "make a complete run the baseline of later runs of its golden set by hand"
ORDER = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, parser_class=Parser)
    accept = actions.add_parser("accept", help="accept RUN_ID as the baseline", description="Accept a complete run as the baseline by hand.")
    accept.add_argument("run_id", metavar="RUN_ID", help="the run to accept (`evalcore runs` lists them)")
    db_option(accept, "DuckDB store")


def command(args: argparse.Namespace) -> int:
    from evalcore.store.behaviour import accept_baseline

    run = accept_baseline(args.db, args.run_id)
    print(f"run {run['run_id']} ({run['golden_path']}, {run['run_date']}) is now the baseline of later runs of its golden set")
    return 0
