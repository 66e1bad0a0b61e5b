"""Command: `python -m evalcore drift` — per-case regressions in the stored behaviour history, with their likely cause.

Exit codes: 0 when the latest run has no flag (older flags are listed but do
not fail), 1 when the latest run has at least one.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from evalcore.drift import DriftFlag

DETAIL_LINES = 5


def run_drift_command(args: argparse.Namespace) -> int:
    from evalcore.drift import detect_drift, flags_for_run, latest_run_id
    from evalcore.paths import golden_identity
    from evalcore.store.history import run_points

    golden = golden_identity(args.golden) if args.golden else None
    points = run_points(args.db, golden_path=golden)
    if not points:
        scope = f" of {golden}" if golden else ""
        print(f"no complete behaviour runs{scope} in {args.db}: nothing to check (record some with `python -m evalcore run`, or `python -m evalcore demo`)")
        return 0
    flags = detect_drift(points)
    latest = latest_run_id(points)
    latest_flags = flags_for_run(flags, latest)
    runs = len({p.run_id for p in points})
    print(render_flags(flags, latest))
    latest_text = f"{len(latest_flags)} flag(s), exit 1" if latest_flags else "no flags"
    print(f"\n{len(flags)} flag(s) over {runs} runs; latest run {latest}: {latest_text}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(flags_json(flags, latest), indent=2) + "\n", encoding="utf-8")
    return 1 if latest_flags else 0


def render_flags(flags: Sequence[DriftFlag], latest_run: str | None) -> str:
    """A table of flags (oldest first) with the first lines of each detail."""
    if not flags:
        return "no regressions: no case's pass rate dropped significantly below its recent history"
    lines = []
    for flag in sorted(flags, key=lambda f: (f.run_date, f.model, f.case_id)):
        marker = " (latest run)" if flag.run_id == latest_run else ""
        lines.append(
            f"{flag.run_date}  {flag.model}  {flag.case_id}: {flag.before_passes}/{flag.before_runs} -> "
            f"{flag.after_passes}/{flag.after_runs}, confidence {flag.confidence:.4f}{marker}"
        )
        lines.append(f"    {flag.attribution}")
        detail = flag.detail.splitlines()
        lines.extend(f"    {line}" for line in detail[:DETAIL_LINES])
        if len(detail) > DETAIL_LINES:
            lines.append(f"    … ({len(detail) - DETAIL_LINES} more lines in --json)")
    return "\n".join(lines)


def flags_json(flags: Sequence[DriftFlag], latest_run: str | None) -> dict[str, Any]:
    return {
        "kind": "drift",
        "latestRun": latest_run,
        "latestRunFlagged": any(f.run_id == latest_run for f in flags),
        "flags": [{**asdict(f), "run_date": f.run_date.isoformat()} for f in flags],
    }
