"""Command: `python -m evalcore runs` — the stored behaviour runs (crashed runs show as crashed) and the processes a crashed run left behind."""

from __future__ import annotations

import argparse
import json

from evalcore.commands.options import db_option

NAME = "runs"
SUMMARY = "list stored behaviour runs (crashed runs show as crashed) and processes a crashed run left behind"
ORDER = 60


def add_arguments(parser: argparse.ArgumentParser) -> None:
    db_option(parser, "DuckDB store")
    parser.add_argument("--stop-leftovers", action="store_true", help="stop the processes an evalcore process that is gone left running")


def command(args: argparse.Namespace) -> int:
    from evalcore.run_kinds import KIND_LABELS, run_status
    from evalcore.store.behaviour import list_runs
    from evalcore.store.db import upgrade

    upgrade(args.db)  # a store an older evalcore wrote gets its run kinds before they are read
    runs = list_runs(args.db)
    if not runs:
        print(f"no behaviour runs in {args.db}")
    else:
        print(f"{'run id':<24} {'status':<26} {'kind':<22} {'date':<10} {'attempts':>8}  models / golden set")
        for run in runs:
            models = ",".join(json.loads(run["models_json"]))
            gate = json.loads(run["gate_json"]) if run.get("gate_json") else None
            status = run_status(str(run["effective_status"]), gate)
            kind = KIND_LABELS.get(str(run.get("kind") or "run"), str(run.get("kind")))
            print(f"{run['run_id']:<24} {status:<26} {kind:<22} {run['run_date']!s:<10} {run['attempts']:>8}  {models} · {run['golden_path']}")
    _leftovers(runs, stop=args.stop_leftovers)
    return 0


def _leftovers(runs: list[dict[str, object]], *, stop: bool) -> None:
    """Processes started by an evalcore process that is gone (a crashed run's server, say): listed, and stopped when asked."""
    from evalcore.processes import leftovers, stop_leftover

    found = leftovers()
    if not found:
        return
    run_of_pid = {run["pid"]: run["run_id"] for run in runs if run["effective_status"] == "crashed"}
    print(f"\n{len(found)} process(es) left running by an evalcore process that is gone:")
    for leftover in found:
        owner = f"run {run_of_pid[leftover.owner_pid]}" if leftover.owner_pid in run_of_pid else f"pid {leftover.owner_pid}"
        print(f"  pid {leftover.pid} (started by {owner}): {leftover.command}")
        if stop:
            stop_leftover(leftover)
    print("stopped them" if stop else "stop them with: python -m evalcore runs --stop-leftovers")
