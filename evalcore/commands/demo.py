"""Command: `python -m evalcore demo` — back-fill a simulated nightly history into a fresh store, then check it for drift."""

from __future__ import annotations

import argparse
import os

# litellm reaches the network on import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def run_demo_command(args: argparse.Namespace) -> int:
    from evalcore.commands.drift import render_changes
    from evalcore.demo import DemoConfig, run_demo
    from evalcore.drift import detect_changes
    from evalcore.paths import default_golden_set
    from evalcore.store.history import run_points

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
