"""Command: `python -m evalcore drift` — persistent changes of each case's pass rate in the stored behaviour history, with their cause.

Exit codes: 0 when the latest run raised no new drop (older flags, open or
recovered, are listed but do not fail), 1 when it flagged at least one
(provisional or confirmed at once) or confirmed one flagged provisionally the
night before. `run` fails its run on the same rule (`run_drift_fails`).

A change has one date everywhere: the night a run first flagged it
(`detected_date`); confirming it later changes its status, not its date.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.commands.options import db_option

if TYPE_CHECKING:
    from evalcore.drift import Change, DriftSettings
    from evalcore.records import RunGate

NAME = "drift"
SUMMARY = "find persistent drops and recoveries of each case's pass rate in the stored history, with their cause"
ORDER = 70
EVIDENCE_LINES = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    db_option(parser, "DuckDB store")
    parser.add_argument("--golden", type=Path, metavar="PATH", help="only runs of this golden set (as given to `run --golden`)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the changes as JSON here")
    parser.add_argument(
        "--min-baseline", type=int, metavar="N", help="runs before a change point for it to be tested (default 2, chosen by bench/drift_sim.py)"
    )


def command(args: argparse.Namespace) -> int:
    from evalcore.behaviour.history import run_points
    from evalcore.drift import detect_changes
    from evalcore.paths import golden_identity
    from evalcore.store.db import upgrade

    upgrade(args.db)  # a store an older evalcore wrote gets its run kinds before the history is read
    golden = golden_identity(args.golden) if args.golden else None
    points = run_points(args.db, golden_path=golden)
    if not points:
        scope = f" of {golden}" if golden else ""
        print(f"no complete behaviour runs{scope} in {args.db}: nothing to check (record some with `python -m evalcore run`, or `python -m evalcore demo`)")
        return 0
    settings = drift_settings(args)
    changes = detect_changes(points, settings)
    latest = points[-1].run_id
    new_drops = [c for c in changes if c.kind == "drop" and c.reported_by(latest)]
    runs = len({p.run_id for p in points})
    print(render_changes(changes, latest))
    print(f"\n{summary(changes)} over {runs} runs; latest run {latest}: " + (f"{len(new_drops)} new drop(s), exit 1" if new_drops else "no new drop"))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(changes_json(changes, latest, settings), indent=2) + "\n", encoding="utf-8")
    return 1 if new_drops else 0


def drift_settings(args: argparse.Namespace) -> DriftSettings:
    """The detector's settings from the command line (`--min-baseline`), defaults otherwise."""
    from evalcore.drift import DriftSettings
    from evalcore.errors import ConfigError

    min_baseline = getattr(args, "min_baseline", None)
    if min_baseline is None:
        return DriftSettings()
    try:
        return DriftSettings(min_baseline=min_baseline)
    except ValueError as exc:
        raise ConfigError(f"--min-baseline {min_baseline}: must be at least 1") from exc


def summary(changes: Sequence[Change]) -> str:
    drops = [c for c in changes if c.kind == "drop"]
    still_open = sum(c.status == "open" for c in drops)
    return f"{len(drops)} drop(s) ({still_open} open, {len(drops) - still_open} recovered)"


def render_changes(changes: Sequence[Change], latest_run: str | None) -> str:
    """Every change, oldest first: what changed when, the test's evidence, the cause, the sentence to act on, the evidence."""
    if not changes:
        return "no persistent change: no case's pass rate moved beyond what its own history explains"
    return "\n".join(render_change(change, latest_run) for change in changes)


def render_change(change: Change, latest_run: str | None) -> str:
    from evalcore.drift.render import headline

    marker = " (found by the latest run)" if change.detected_run_id == latest_run else ""
    if change.provisional_run_id and change.confirmed_run_id == latest_run:
        marker += " (confirmed by the latest run)"
    if change.provisional:
        marker += " (provisional: one run shows it; the next run confirms or withdraws it)"
    lines = [
        f"{change.change_date}  {change.model}  {change.case_id}: {change.kind.upper()}{marker}",
        f"    {headline(change)}",
        f"    {change.attribution}: {change.action}",
    ]
    evidence = change.evidence.splitlines()
    lines.extend(f"    {line}" for line in evidence[:EVIDENCE_LINES])
    if len(evidence) > EVIDENCE_LINES:
        lines.append(f"    … ({len(evidence) - EVIDENCE_LINES} more lines in --json)")
    return "\n".join(lines)


def change_json(change: Change) -> dict[str, Any]:
    """One change as JSON: every field, dates as ISO strings, and the Wilson intervals of the before/after pass rates."""
    data = asdict(change)
    for name, value in data.items():
        if isinstance(value, date):
            data[name] = value.isoformat()
    data["changed"] = list(change.changed)
    data["confirmation"] = change.confirmation
    data["before_interval"] = list(change.before_interval)
    data["after_interval"] = list(change.after_interval)
    return data


def changes_json(changes: Sequence[Change], latest_run: str | None, settings: DriftSettings) -> dict[str, Any]:
    from evalcore.drift.types import DRIFT_SCHEMA_VERSION

    return {
        "kind": "drift",
        "schemaVersion": DRIFT_SCHEMA_VERSION,
        "latestRun": latest_run,
        "latestRunFlagged": any(c.kind == "drop" and c.reported_by(latest_run) for c in changes) if latest_run else False,
        "settings": {f.name: getattr(settings, f.name) for f in fields(settings)},
        "changes": [change_json(c) for c in changes],
    }


def drift_of_run(db: Path, golden_path: str, run_id: str) -> dict[str, Any]:
    """The changes this run found in the stored history of its golden set (a `run` report's "drift" part): those it
    flagged, and those flagged provisionally the night before that it confirmed (dated the night they were flagged)."""
    from evalcore.behaviour.history import run_points
    from evalcore.drift import DriftSettings, detect_changes

    settings = DriftSettings()
    changes = detect_changes(run_points(db, golden_path=golden_path), settings)
    return changes_json([c for c in changes if c.reported_by(run_id)], run_id, settings)


def run_drift_fails(drift: Mapping[str, Any]) -> bool:
    """Whether the changes a run found fail it: a drop it flagged, provisional or confirmed (a recovery does not)."""
    return any(c.get("kind") == "drop" for c in drift.get("changes") or [])


def with_drift(gate: RunGate | None, drift: Mapping[str, Any]) -> RunGate | None:
    """The run gate once the history is read: a drop this run flagged (provisional or confirmed) fails it, and such a
    run is never green, so the nightly job that caused the drop exits 1 that night and `gate` reads the same verdict."""
    if gate is None or not run_drift_fails(drift):
        return gate
    drops = sum(1 for c in drift.get("changes") or [] if c.get("kind") == "drop")
    reason = f"drift: this run flagged {drops} drop(s) against the cases' own history (see the report's drift); {gate.reason}"
    return replace(gate, status="fail", passed=False, green=False, reason=reason)


def render_run_drift(drift: Mapping[str, Any]) -> str | None:
    """What `run` prints about the changes it found (None without any)."""
    changes = drift.get("changes") or []
    if not changes:
        return None
    header = f"\ndrift: {len(changes)} case(s) changed against their own history, found by this run"
    lines = [f"  {c['change_date']}  {c['model']}  {c['case_id']}: {_run_status(c)}{c['attribution']}: {c['action']}" for c in changes]
    footer = "\ndrift fails this run: it flagged a drop" if run_drift_fails(drift) else ""
    return header + "\n" + "\n".join(lines) + footer


def _run_status(change: Mapping[str, Any]) -> str:
    """What a run says of a drop it reports: flagged tonight (provisionally or not), or flagged earlier and confirmed tonight."""
    if change.get("kind") != "drop":
        return ""
    if change.get("provisional"):
        return f"provisional drop (one run shows it; the next run confirms or withdraws it), flagged on {change['detected_date']}: "
    if change.get("provisional_run_id"):
        return f"drop flagged on {change['detected_date']}, confirmed on {change['confirmed_date']}: "
    return f"drop flagged on {change['detected_date']}: "
