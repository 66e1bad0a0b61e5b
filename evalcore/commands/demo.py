"""Command: `python -m evalcore demo` — back-fill a simulated nightly history into a fresh store, then check it for drift."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalcore.commands.options import db_option

NAME = "demo"
SUMMARY = "back-fill a simulated nightly history (sim models) into a fresh store, then check it for drift"
ORDER = 80


def add_arguments(parser: argparse.ArgumentParser) -> None:
    db_option(parser, "DuckDB store to create")
    parser.add_argument("--golden", type=Path, metavar="PATH", help="golden set (default golden/tasks.yaml, here or the bundled one)")
    parser.add_argument("--days", type=int, default=21, help="nightly runs to simulate, ending today (default 21, at least 8)")
    parser.add_argument("--runs", type=int, default=5, help="attempts per case and model (default 5)")
    parser.add_argument("--force", action="store_true", help="delete the store first if it already holds runs")


def command(args: argparse.Namespace) -> int:
    from evalcore.behaviour.demo_history import DemoConfig, run_demo
    from evalcore.behaviour.history import run_points
    from evalcore.commands.drift import render_changes
    from evalcore.drift import detect_changes
    from evalcore.paths import default_golden_set

    config = DemoConfig(db_path=args.db, golden_path=args.golden or default_golden_set(), days=args.days, runs=args.runs)
    print(
        f"simulating {config.days} nightly runs ({config.first_day} .. {config.today}) into {config.db_path}: "
        f"server descriptions change on {config.description_change}, the drifting model updates on {config.model_update}"
    )
    result = run_demo(config, force=args.force)
    print(f"{len(result.run_ids)} nightly runs, {result.attempts} attempts of {', '.join(result.models)} (all simulated)")
    print(f"{len(result.layer2_run_ids)} Layer 2 runs (golden/robustness.yaml, golden/security.yaml; scripted models)")
    print(f"{len(result.multiturn_run_ids)} multi-turn run (golden/multiturn.yaml; sim/lexical, sim/user); {result.seconds:.1f}s in all")
    points = run_points(config.db_path)
    print(render_changes(detect_changes(points), points[-1].run_id if points else None))
    print(f"\nnext: python -m evalcore drift --db {config.db_path}")
    return 0
