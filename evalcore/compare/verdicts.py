"""Pure logic: the verdict of a comparison of two behaviour runs, per (model, case) and per model (Layer 1 statistics).

Each arm's counts are the stored metrics of its run (`run_metrics`: passes,
scored, errored, attempts), never a recount. Errored attempts (a provider
error after retries, the server out of reach: `evalcore.scoring.errored`)
are not scored, so they are in neither arm's pass rate; they are shown.

For each (model, case), with c_b of n_b scored attempts passing in the
baseline and c_c of n_c in the candidate (`evalcore.scoring.stats`):

    delta     = c_c / n_c - c_b / n_b
    ci        = Newcombe's hybrid score interval of delta (95%)
    pValue    = two-sided Fisher exact test of the 2x2 table
    qValue    = Benjamini-Hochberg over the (model, case) tests of the comparison
    verdict   = better (q <= alpha, delta > 0) | worse (q <= alpha, delta < 0) | no_difference
                | inconclusive (an arm has no scored attempt: nothing was measured)
    runsNeeded = attempts per arm for 80% power at alpha against the observed rates,
                 where the verdict is no_difference and delta != 0

Per model the cases' counts are pooled and tested the same way, with BH over
the models. Pooling cases whose pass rates differ makes the model test
conservative (the binomial variance of the pool exceeds the stratified one),
never anti-conservative.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from evalcore.records import MetricSet, published
from evalcore.scoring.stats import benjamini_hochberg, fisher_exact_two_sided, newcombe_interval, runs_needed

Verdict = Literal["better", "worse", "no_difference", "inconclusive"]
SCHEMA_VERSION: Final = 1
POWER: Final = 0.8


@dataclass(frozen=True)
class ArmCounts:
    """One arm's stored counts of one (model, case), or of one model."""

    passed: int = 0
    scored: int = 0
    errored: int = 0
    attempts: int = 0

    @classmethod
    def from_metrics(cls, metrics: MetricSet | None) -> ArmCounts:
        if metrics is None:
            return cls()
        return cls(*(int(metrics.get(name) or 0) for name in ("passes", "scored", "errored", "attempts")))

    @property
    def rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None

    def to_json(self) -> dict[str, int]:
        return {"passed": self.passed, "scored": self.scored, "errored": self.errored, "attempts": self.attempts}


@dataclass(frozen=True)
class Difference:
    """The test of one (model, case), or of one model (`case` None)."""

    model: str
    case: str | None
    baseline: ArmCounts
    candidate: ArmCounts
    delta: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    q_value: float | None
    verdict: Verdict
    runs_needed: int | None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"model": self.model}
        if self.case is not None:
            data["case"] = self.case
        return data | {
            "baseline": self.baseline.to_json(),
            "candidate": self.candidate.to_json(),
            "delta": self.delta,
            "ci": list(self.ci) if self.ci is not None else None,
            "pValue": self.p_value,
            "qValue": self.q_value,
            "verdict": self.verdict,
            "runsNeeded": self.runs_needed,
        }


@dataclass(frozen=True)
class Comparison:
    """A comparison's whole result; `to_json` is the contract of docs/compare.schema.json."""

    comparison_id: str
    golden_path: str
    candidate: Mapping[str, Any]  # {"kind": url | stdio | tools | run, ...}: what the candidate arm changed
    alpha: float
    runs: int | None
    baseline_run_id: str
    candidate_run_id: str
    cases: tuple[Difference, ...]
    models: tuple[Difference, ...]

    @property
    def failed(self) -> tuple[Difference, ...]:
        """What fails the comparison (exit 1): every (model, case) or model that is worse, or was not measured."""
        return tuple(d for d in (*self.cases, *self.models) if d.verdict in ("worse", "inconclusive"))

    def to_json(self) -> dict[str, Any]:
        """The `--json` document and the stored report, published (no secret evalcore knows leaves in it: a candidate URL's key)."""
        return published(
            {
                "schemaVersion": SCHEMA_VERSION,
                "comparisonId": self.comparison_id,
                "goldenPath": self.golden_path,
                "candidate": dict(self.candidate),
                "alpha": self.alpha,
                "runs": self.runs,
                "baselineRunId": self.baseline_run_id,
                "candidateRunId": self.candidate_run_id,
                "correction": "benjamini-hochberg",
                "failed": bool(self.failed),
                "cases": [d.to_json() for d in self.cases],
                "models": [d.to_json() for d in self.models],
            }
        )


def judge_differences(pairs: Sequence[tuple[str, str | None, ArmCounts, ArmCounts]], alpha: float, *, with_runs_needed: bool = True) -> list[Difference]:
    """Each (model, case, baseline, candidate) tested; BH over the pairs where both arms scored something.

    `runsNeeded` counts attempts per arm of one (model, case); a model's pooled counts have none (`with_runs_needed`).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    testable = [i for i, (_, _, base, cand) in enumerate(pairs) if base.scored and cand.scored]
    p_values = {i: fisher_exact_two_sided(pairs[i][2].passed, pairs[i][2].scored, pairs[i][3].passed, pairs[i][3].scored) for i in testable}
    q_values = dict(zip(testable, benjamini_hochberg([p_values[i] for i in testable]), strict=True))
    differences = []
    for index, (model, case, base, cand) in enumerate(pairs):
        if index not in p_values or base.rate is None or cand.rate is None:
            differences.append(Difference(model, case, base, cand, None, None, None, None, "inconclusive", None))
            continue
        delta = cand.rate - base.rate
        q_value = q_values[index]
        verdict: Verdict = "no_difference" if q_value > alpha or delta == 0 else "better" if delta > 0 else "worse"
        needed = runs_needed(base.rate, cand.rate, alpha, POWER) if verdict == "no_difference" and with_runs_needed else None
        interval = newcombe_interval(base.passed, base.scored, cand.passed, cand.scored)
        differences.append(Difference(model, case, base, cand, delta, interval, p_values[index], q_value, verdict, needed))
    return differences


def compare_runs(
    baseline: Sequence[MetricSet],
    candidate: Sequence[MetricSet],
    *,
    comparison_id: str,
    golden_path: str,
    candidate_source: Mapping[str, Any],
    alpha: float,
    runs: int | None,
    baseline_run_id: str,
    candidate_run_id: str,
) -> Comparison:
    """The comparison of two runs' stored metric sets: every (model, case) and model either run has, baseline order first."""
    cases = _pairs(baseline, candidate, "case")
    models = _pairs(baseline, candidate, "model")
    return Comparison(
        comparison_id=comparison_id,
        golden_path=golden_path,
        candidate=candidate_source,
        alpha=alpha,
        runs=runs,
        baseline_run_id=baseline_run_id,
        candidate_run_id=candidate_run_id,
        cases=tuple(judge_differences(cases, alpha)),
        models=tuple(judge_differences(models, alpha, with_runs_needed=False)),
    )


def _pairs(baseline: Sequence[MetricSet], candidate: Sequence[MetricSet], scope: str) -> list[tuple[str, str | None, ArmCounts, ArmCounts]]:
    def by_key(sets: Sequence[MetricSet]) -> Mapping[tuple[str, str], MetricSet]:
        return {(s.model, s.case_id): s for s in sets if s.scope == scope}

    base, cand = by_key(baseline), by_key(candidate)
    keys = list(dict.fromkeys([*base, *cand]))
    return [
        (model, case_id if scope == "case" else None, ArmCounts.from_metrics(base.get((model, case_id))), ArmCounts.from_metrics(cand.get((model, case_id))))
        for model, case_id in keys
    ]
