"""Pure logic: per-case regression ("drift") detection over stored behaviour runs, with attribution (Layer 1).

Each (model, case) has a chronological history of runs, one `RunPoint` each:
`passes` of `runs` attempts. A run is tested against the case's own recent
history, the pooled previous window (the last `WINDOW_RUNS` = 7 runs before it,
at least `MIN_WINDOW_RUNS` = 3):

                 passed       failed
    window       a            b           (a + b = before_runs)
    this run     c            d           (c + d = after_runs)

with a one-sided Fisher exact test (Fisher 1922, "On the interpretation of χ²
from contingency tables, and the calculation of P", JRSS 85(1):87-94): with
the margins fixed, the number of passes in this run is hypergeometric, and

    p = P(X <= c) = Σ_{x <= c} C(K, x) · C(N - K, n - x) / C(N, n)
    N = a + b + c + d,   K = a + c,   n = c + d

the probability of a run at least this bad if the case's pass rate had not
changed. A run is flagged when BOTH

- p < `P_THRESHOLD` = 0.01, and
- the pass rate dropped by at least `MIN_DROP` = 0.4 (before a/(a+b), after c/(c+d)).

Why both: a run has only ~5 attempts, so the test alone is weak evidence on
one side and over-eager on the other. Against a long perfect window, 3/5 has
p ≈ 0.013 and 2/5 p ≈ 0.001: a case at 100% that dips to 2/5 once is flagged
by p alone. The drop bound keeps the flag to changes a person would act on
(5/5 → 3/5 is a 0.4 drop, 4/5 → 3/5 is not), and the p bound keeps a noisy
case (an 80% soft case that lands on 1/5 against a short, lucky window) from
flagging on the size of the drop alone. `confidence = 1 - p`.

After a flag the baseline restarts at the flagged run: the runs that follow
are compared only with runs from the flag on, so one regression gives one
flag (on the run where it started) rather than a flag a night until the
window forgets the good runs, and a further drop is still caught.

Attribution compares the flagged run with the run just before it, in order:

1. server fingerprint changed -> "server/description change" (detail: the
   description diff, `description_diff`);
2. case hash changed -> "golden case changed";
3. model version changed -> "model update suspected" (detail: "version A -> B");
4. otherwise -> "model update suspected (silent: the provider reported the same version)".
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

P_THRESHOLD: Final = 0.01
MIN_DROP: Final = 0.4
WINDOW_RUNS: Final = 7
MIN_WINDOW_RUNS: Final = 3

SERVER_CHANGE: Final = "server/description change"
CASE_CHANGE: Final = "golden case changed"
MODEL_UPDATE: Final = "model update suspected"
SILENT_MODEL_UPDATE: Final = "model update suspected (silent: the provider reported the same version)"


@dataclass(frozen=True)
class RunPoint:
    """One run of one case by one model: `passes` of `runs` attempts, with the run's fingerprints."""

    model: str
    case_id: str
    run_id: str
    run_date: date
    passes: int
    runs: int
    server_fingerprint: str
    case_hash: str
    model_version: str | None
    golden_hash: str
    server_tools_json: str = "[]"  # [{name, description}, ...] as stored with the run, for description diffs
    simulated: bool = False  # the model is an offline sim/ model


@dataclass(frozen=True)
class DriftFlag:
    """A run whose pass rate dropped significantly below the case's recent history, and the likely cause."""

    model: str
    case_id: str
    run_id: str
    run_date: date
    before_passes: int
    before_runs: int
    after_passes: int
    after_runs: int
    p_value: float
    confidence: float
    attribution: str
    detail: str

    @property
    def before_rate(self) -> float:
        return self.before_passes / self.before_runs

    @property
    def after_rate(self) -> float:
        return self.after_passes / self.after_runs


@dataclass(frozen=True)
class TimelinePoint:
    """One point of a case's pass-rate timeline, for plotting; `flag` is set on flagged runs."""

    model: str
    case_id: str
    run_id: str
    run_date: date
    passes: int
    runs: int
    pass_rate: float
    flag: DriftFlag | None


def fisher_one_sided_lower(before_passes: int, before_runs: int, after_passes: int, after_runs: int) -> float:
    """One-sided Fisher exact p-value that the second sample's pass rate is lower (Fisher 1922).

        p = Σ_{x = max(0, n - (N - K))}^{c} C(K, x) · C(N - K, n - x) / C(N, n)
        N = before_runs + after_runs,  K = before_passes + after_passes,  n = after_runs,  c = after_passes

    Exact integer arithmetic (`math.comb`); the result is clamped to [0, 1].
    """
    for passes, runs in ((before_passes, before_runs), (after_passes, after_runs)):
        if runs < 0 or not 0 <= passes <= runs:
            raise ValueError(f"need 0 <= passes <= runs, got {passes}/{runs}")
    total = before_runs + after_runs
    total_passes = before_passes + after_passes
    if after_runs == 0 or total == 0:
        return 1.0
    low = max(0, after_runs - (total - total_passes))
    tail = sum(math.comb(total_passes, x) * math.comb(total - total_passes, after_runs - x) for x in range(low, after_passes + 1))
    return min(1.0, tail / math.comb(total, after_runs))


def group_histories(points: Iterable[RunPoint]) -> dict[tuple[str, str], list[RunPoint]]:
    """Points grouped per (model, case), each list in the order given (chronological from the store)."""
    histories: dict[tuple[str, str], list[RunPoint]] = {}
    for point in points:
        histories.setdefault((point.model, point.case_id), []).append(point)
    return histories


def detect_drift(points: Iterable[RunPoint], *, window: int = WINDOW_RUNS, min_window: int = MIN_WINDOW_RUNS) -> list[DriftFlag]:
    """Every flagged run of every (model, case) history, in history order; see the module docstring for the rule."""
    flags: list[DriftFlag] = []
    for history in group_histories(points).values():
        flags.extend(case_flags(history, window=window, min_window=min_window))
    return flags


def case_flags(history: Sequence[RunPoint], *, window: int = WINDOW_RUNS, min_window: int = MIN_WINDOW_RUNS) -> list[DriftFlag]:
    """Flags of one chronological (model, case) history; the baseline restarts at each flagged run."""
    flags: list[DriftFlag] = []
    regime_start = 0
    for index, point in enumerate(history):
        previous = history[max(regime_start, index - window) : index]
        if len(previous) < min_window or point.runs == 0:
            continue
        before_passes = sum(p.passes for p in previous)
        before_runs = sum(p.runs for p in previous)
        if before_runs == 0:
            continue
        drop = before_passes / before_runs - point.passes / point.runs
        if drop < MIN_DROP - 1e-9:
            continue
        p_value = fisher_one_sided_lower(before_passes, before_runs, point.passes, point.runs)
        if p_value >= P_THRESHOLD:
            continue
        attribution, detail = attribute(history[index - 1], point)
        flags.append(
            DriftFlag(
                model=point.model,
                case_id=point.case_id,
                run_id=point.run_id,
                run_date=point.run_date,
                before_passes=before_passes,
                before_runs=before_runs,
                after_passes=point.passes,
                after_runs=point.runs,
                p_value=p_value,
                confidence=1.0 - p_value,
                attribution=attribution,
                detail=detail,
            )
        )
        regime_start = index
    return flags


def attribute(previous: RunPoint, flagged: RunPoint) -> tuple[str, str]:
    """(attribution, detail) for a flagged run against the run just before it; rules in the module docstring."""
    if previous.server_fingerprint != flagged.server_fingerprint:
        diff = description_diff(_tools(previous.server_tools_json), _tools(flagged.server_tools_json))
        header = f"server fingerprint {previous.server_fingerprint[:12]} -> {flagged.server_fingerprint[:12]}"
        body = diff or "tool names and descriptions unchanged (the change is in input schemas or server/discover)"
        return SERVER_CHANGE, f"{header}\n{body}"
    if previous.case_hash != flagged.case_hash:
        return CASE_CHANGE, f"case hash {previous.case_hash} -> {flagged.case_hash}"
    if previous.model_version != flagged.model_version:
        return MODEL_UPDATE, f"version {previous.model_version} -> {flagged.model_version}"
    return SILENT_MODEL_UPDATE, f"server, case and reported model version ({flagged.model_version}) unchanged since {previous.run_date}"


def description_diff(old_tools: Sequence[Mapping[str, Any]], new_tools: Sequence[Mapping[str, Any]]) -> str:
    """Added and removed tools, and each changed description as a unified diff (difflib); "" when nothing changed.

    `old_tools` / `new_tools` are `server_tools_json` lists: [{"name": ..., "description": ...}, ...].
    """
    old = {str(t.get("name")): str(t.get("description") or "") for t in old_tools}
    new = {str(t.get("name")): str(t.get("description") or "") for t in new_tools}
    lines: list[str] = []
    lines.extend(f"added tool {name}" for name in new if name not in old)
    lines.extend(f"removed tool {name}" for name in old if name not in new)
    for name in new:
        if name in old and old[name] != new[name]:
            lines.append(f"changed description of {name}:")
            diff = list(difflib.unified_diff(old[name].splitlines(), new[name].splitlines(), lineterm="", n=1))
            lines.extend(f"  {line}" for line in diff[2:])  # without the ---/+++ file header
    return "\n".join(lines)


def case_timelines(points: Iterable[RunPoint], flags: Iterable[DriftFlag]) -> dict[tuple[str, str], list[TimelinePoint]]:
    """Per (model, case), its runs as pass-rate points with the flag of each flagged run, for the dashboard's charts."""
    by_run = {(f.model, f.case_id, f.run_id): f for f in flags}
    return {
        key: [
            TimelinePoint(
                model=p.model,
                case_id=p.case_id,
                run_id=p.run_id,
                run_date=p.run_date,
                passes=p.passes,
                runs=p.runs,
                pass_rate=p.passes / p.runs if p.runs else 0.0,
                flag=by_run.get((p.model, p.case_id, p.run_id)),
            )
            for p in history
        ]
        for key, history in group_histories(points).items()
    }


def latest_run_id(points: Sequence[RunPoint]) -> str | None:
    """The run id of the last point (points come from the store ordered by run date, then start time)."""
    return points[-1].run_id if points else None


def flags_for_run(flags: Iterable[DriftFlag], run_id: str | None) -> list[DriftFlag]:
    return [flag for flag in flags if flag.run_id == run_id]


def _tools(server_tools_json: str) -> list[Mapping[str, Any]]:
    tools = json.loads(server_tools_json or "[]")
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
