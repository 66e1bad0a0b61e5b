"""Orchestration: whether a run measured what it was asked to. A run with errored attempts is incomplete, never green.

An errored attempt failed for a provider or harness reason, not because of what
the model did (the rule is `is_errored`). Such a run is *incomplete*: its run
gate fails with the reason, it never becomes the baseline of a later run, and
`run` and `gate` exit non-zero, however good the attempts that did run were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.redaction import clip


def is_errored(stop_reason: str | None) -> bool:
    """The errored-attempt rule: the model call failed beyond its retries, or the server could not be reached."""
    return stop_reason in ("model_error", "server_error")


def incompleteness(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """`{"errored": {model: count}, "reason": one line}` for a run with errored attempts, else None."""
    totals: dict[str, int] = {}
    errored: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        totals[row["model"]] = totals.get(row["model"], 0) + 1
        if is_errored(row.get("stop_reason")):
            errored.setdefault(row["model"], []).append(row)
    if not errored:
        return None
    parts = []
    for model, failed in errored.items():
        first = next((str(row["error"]) for row in failed if row.get("error")), "no error text")
        parts.append(f"{model}: {len(failed)} of {totals[model]} attempts errored (first: {clip(first, 300)})")
    return {"errored": {model: len(failed) for model, failed in errored.items()}, "reason": "; ".join(parts)}


def mark_incomplete(report: dict[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The report with its run gate failed and the reason attached when the run is incomplete; unchanged otherwise."""
    incomplete = incompleteness(rows)
    if incomplete is None:
        return report
    return {**report, "passed": False, "incomplete": incomplete}
