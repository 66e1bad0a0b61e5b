"""Pure logic: a perturbation sweep's sensitivity, per model and per tool: the drop in selection accuracy under each
perturbation, with its exact test (`evalcore perturb`, Layer 1 statistics).

Counts come from the runs' stored case metrics, never a recount: the
`selection` scorer applies to every scored attempt, so a case's correct
selections are its `selection_accuracy` mean times its `scored` attempts.
Errored attempts are in neither arm's denominator; they are shown.

For a model (its cases pooled), or a (model, tool) (the cases whose first
expected call is that tool, pooled; negative cases under NO_TOOL), with c_b of
n_b scored baseline attempts selecting right and c_p of n_p perturbed ones:

    drop      = c_b / n_b - c_p / n_p          (the sensitivity score: positive when the perturbation hurts)
    ci        = the 95% Newcombe interval of the drop
    pValue    = two-sided Fisher exact test of the 2x2 table
    qValue    = Benjamini-Hochberg across every model row of the sweep (every perturbation), and
                separately across every tool row
    verdict   = worse (q <= alpha, drop > 0) | better (q <= alpha, drop < 0) | no_difference
                | inconclusive (an arm has no scored attempt)

A row pools only the cases scored in both arms (at least one scored attempt in
each: `evalcore.compare.verdicts.pool_cases`) and says how many it left out
(`casesLeftOut`). A row with a left-out case is never `better` and fails the
sweep (exit 1), as the case fails the arm's comparison: that case was not
measured, and pooling over different cases would let an arm read better because
its attempts errored.

The tests are `evalcore.compare.verdicts.judge_differences`, the ones
`evalcore compare` runs (`evalcore.scoring.stats`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from evalcore.compare.verdicts import ArmCounts, Difference, Pool, judge_pools, pool_cases
from evalcore.golden.model import GoldenSet
from evalcore.records import MetricSet, published
from evalcore.scoring.registry import get

SCHEMA_VERSION: Final = 1
NO_TOOL: Final = "(no tool)"  # the negative cases: the right selection is no call


@dataclass(frozen=True)
class Sensitivity:
    """The test of one model (`tool` None) or one (model, tool) under one perturbation."""

    perturbation: str
    tool: str | None
    difference: Difference

    @property
    def drop(self) -> float | None:
        return 0.0 - self.difference.delta if self.difference.delta is not None else None  # 0.0 - x: no -0.0

    def to_json(self) -> dict[str, Any]:
        d = self.difference
        data: dict[str, Any] = {"perturbation": self.perturbation, "model": d.model}
        if self.tool is not None:
            data["tool"] = self.tool
        return data | {
            "baseline": _arm(d.baseline),
            "perturbed": _arm(d.candidate),
            "drop": self.drop,
            "ci": [0.0 - d.ci[1], 0.0 - d.ci[0]] if d.ci is not None else None,
            "pValue": d.p_value,
            "qValue": d.q_value,
            "verdict": d.verdict,
            "casesLeftOut": d.cases_left_out or 0,
        }


@dataclass(frozen=True)
class PerturbationArm:
    """One perturbation as it ran: its id and title, what the models saw changed, its run and its comparison."""

    id: str
    title: str
    rewrite: Mapping[str, Any]
    run_id: str
    comparison_id: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "candidateRunId": self.run_id, "comparisonId": self.comparison_id, "rewrite": dict(self.rewrite)}


@dataclass(frozen=True)
class PerturbReport:
    """A sweep's whole result; `to_json` is the contract of docs/perturb.schema.json."""

    perturb_id: str
    golden_path: str
    alpha: float
    runs: int
    seed: int
    baseline_run_id: str
    perturbations: tuple[PerturbationArm, ...]
    models: tuple[Sensitivity, ...]
    tools: tuple[Sensitivity, ...] = field(default=())

    @property
    def failed(self) -> tuple[Sensitivity, ...]:
        """What fails the sweep (exit 1): a model or tool whose selection is significantly worse, or was not measured
        (wholly: a case of it left out, not scored in both arms)."""
        return tuple(s for s in (*self.models, *self.tools) if s.difference.fails)

    def to_json(self) -> dict[str, Any]:
        """The `--json` document and the stored report, published (no secret evalcore knows leaves in it)."""
        return published(
            {
                "schemaVersion": SCHEMA_VERSION,
                "perturbId": self.perturb_id,
                "goldenPath": self.golden_path,
                "alpha": self.alpha,
                "runs": self.runs,
                "seed": self.seed,
                "baselineRunId": self.baseline_run_id,
                "metric": selection_metric(),
                "correction": "benjamini-hochberg",
                "failed": bool(self.failed),
                "perturbations": [p.to_json() for p in self.perturbations],
                "models": [s.to_json() for s in self.models],
                "tools": [s.to_json() for s in self.tools],
            }
        )


def selection_metric() -> str:
    """The metric the sensitivity reads: the `selection` scorer's, as the registry names it."""
    return get("selection").metric


def case_tools(golden: GoldenSet) -> dict[str, str]:
    """Each case's tool: the first it expects to be called (`expect_tool`, else the first of `expect_sequence` or of
    `expect_set`), or NO_TOOL."""
    return {case.id: next(iter(case.first_tools()), NO_TOOL) for case in golden.cases}


def case_selection_counts(metrics: Sequence[MetricSet]) -> dict[tuple[str, str], ArmCounts]:
    """Correct selections per (model, case), from the run's stored case metrics."""
    metric = selection_metric()
    counts: dict[tuple[str, str], ArmCounts] = {}
    for case in (s for s in metrics if s.scope == "case"):
        scored = int(case.get("scored") or 0)
        accuracy = case.get(metric)
        correct = round(accuracy * scored) if accuracy is not None else 0
        counts[(case.model, case.case_id)] = ArmCounts(correct, scored, int(case.get("errored") or 0), int(case.get("attempts") or 0))
    return counts


def selection_pools(
    baseline: Mapping[tuple[str, str], ArmCounts], perturbed: Mapping[tuple[str, str], ArmCounts], tools_of_cases: Mapping[str, str]
) -> dict[tuple[str, str | None], Pool]:
    """Per model (tool None) and per (model, tool), in baseline order: its cases pooled over those scored in both arms."""
    cases = []
    for model, case_id in dict.fromkeys([*baseline, *perturbed]):
        pair = baseline.get((model, case_id), ArmCounts()), perturbed.get((model, case_id), ArmCounts())
        cases += [((model, None), *pair), ((model, tools_of_cases.get(case_id, NO_TOOL)), *pair)]
    return pool_cases(cases)


def judge_sensitivity(
    baseline: Sequence[MetricSet], perturbed: Sequence[tuple[str, Sequence[MetricSet]]], tools_of_cases: Mapping[str, str], alpha: float
) -> tuple[list[Sensitivity], list[Sensitivity]]:
    """(model rows, tool rows): every perturbation's model and (model, tool) tested against the baseline, in baseline order."""
    base = case_selection_counts(baseline)
    model_rows: list[tuple[str, tuple[str, str | None, Pool]]] = []
    tool_rows: list[tuple[str, tuple[str, str | None, Pool]]] = []
    for perturbation, metrics in perturbed:
        for (model, tool), pool in selection_pools(base, case_selection_counts(metrics), tools_of_cases).items():
            (model_rows if tool is None else tool_rows).append((perturbation, (model, tool, pool)))
    return _judged(model_rows, alpha), _judged(tool_rows, alpha)


def _judged(rows: Sequence[tuple[str, tuple[str, str | None, Pool]]], alpha: float) -> list[Sensitivity]:
    differences = judge_pools([pool for _, pool in rows], alpha)
    return [Sensitivity(perturbation, pool[1], difference) for (perturbation, pool), difference in zip(rows, differences, strict=True)]


def _arm(counts: ArmCounts) -> dict[str, int]:
    return {"correct": counts.passed, "scored": counts.scored, "errored": counts.errored, "attempts": counts.attempts}
