"""Pure logic: the verdict of a comparison of two behaviour runs, per (model, case) and per model (Layer 1 statistics).

Each arm's counts are the stored case metrics of its run (`run_metrics`:
passes, scored, errored, attempts), never a recount of attempts; a model's
are sums of them (below). Errored attempts (a provider error after retries,
the server out of reach: `evalcore.scoring.errored`) are not scored, so they
are in neither arm's pass rate; they are shown.

For each (model, case), with c_b of n_b scored attempts passing in the
baseline and c_c of n_c in the candidate (`evalcore.scoring.stats`):

    delta     = c_c / n_c - c_b / n_b
    ci        = Newcombe's hybrid score interval of delta (95%)
    pValue    = two-sided Fisher exact test of the 2x2 table
    qValue    = Benjamini-Hochberg over the (model, case) tests of the comparison
    verdict   = better (q <= alpha, delta > 0) | worse (q <= alpha, delta < 0) | no_difference
                | inconclusive (an arm has no scored attempt: nothing was measured)
    runsNeeded = attempts per arm for 80% power at alpha / m (m: the pairs tested) against the
                 observed rates, and more than either arm ran, where the verdict is no_difference
                 and delta != 0

Per model the cases' counts are pooled (summed) and tested the same way, with
BH over the models. Pooling cases whose pass rates differ makes the model test
conservative (the binomial variance of the pool exceeds the stratified one),
never anti-conservative.

A pool takes only the cases scored in both arms (at least one scored attempt
in each, `scored` > 0: docs/metrics.md), summing their stored case counts, so
both arms' rates are over the same cases: a candidate whose attempts errored
on the case the baseline fails does not read better for it. The pool says how
many cases it left out (`casesLeftOut`). Each left-out case is an inconclusive
(model, case), so the comparison fails; and a pool with left-out cases is never
`better` (it reads inconclusive, its test kept): what the left-out cases would
have scored is unknown.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, TypeVar

from evalcore.records import MetricSet, published
from evalcore.scoring.stats import benjamini_hochberg, fisher_exact_two_sided, newcombe_interval, runs_needed

Verdict = Literal["better", "worse", "no_difference", "inconclusive"]
SCHEMA_VERSION: Final = 1
POWER: Final = 0.8
LEFT_OUT_REASON: Final = "not scored in both arms"
PoolKey = TypeVar("PoolKey", bound=Hashable)


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

    def __add__(self, other: ArmCounts) -> ArmCounts:
        return ArmCounts(self.passed + other.passed, self.scored + other.scored, self.errored + other.errored, self.attempts + other.attempts)


@dataclass(frozen=True)
class Pool:
    """Both arms' counts of a group of cases, summed over the cases scored in both arms; `cases_left_out` the others."""

    baseline: ArmCounts = ArmCounts()
    candidate: ArmCounts = ArmCounts()
    cases_left_out: int = 0


def scored_in_both(baseline: ArmCounts, candidate: ArmCounts) -> bool:
    """Whether a case was measured in both arms: at least one scored attempt in each (`evalcore.taxonomy`)."""
    return baseline.scored > 0 and candidate.scored > 0


def pool_cases(cases: Iterable[tuple[PoolKey, ArmCounts, ArmCounts]]) -> dict[PoolKey, Pool]:
    """Per key (a model, a (model, tool)), in first-seen order: its cases' (baseline, candidate) counts pooled.

    Only cases scored in both arms enter a pool, so both arms' rates are over the same cases; the others are counted
    as left out. Pooling over different case sets would let an arm read better because its attempts on a hard case
    errored.
    """
    pools: dict[PoolKey, Pool] = {}
    for key, baseline, candidate in cases:
        pool = pools.get(key, Pool())
        if scored_in_both(baseline, candidate):
            pools[key] = Pool(pool.baseline + baseline, pool.candidate + candidate, pool.cases_left_out)
        else:
            pools[key] = replace(pool, cases_left_out=pool.cases_left_out + 1)
    return pools


def left_out_text(cases: int) -> str:
    """ "2 cases not scored in both arms": why a pool has fewer cases than the golden set."""
    return f"{cases} case{'s' if cases != 1 else ''} {LEFT_OUT_REASON}"


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
    cases_left_out: int | None = None  # a pool's (`pool_cases`); None for one (model, case)

    @property
    def fails(self) -> bool:
        """Whether it fails its comparison: worse, not measured, or pooled without some case that was not measured."""
        return self.verdict in ("worse", "inconclusive") or bool(self.cases_left_out)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"model": self.model}
        if self.case is not None:
            data["case"] = self.case
        data |= {
            "baseline": self.baseline.to_json(),
            "candidate": self.candidate.to_json(),
            "delta": self.delta,
            "ci": list(self.ci) if self.ci is not None else None,
            "pValue": self.p_value,
            "qValue": self.q_value,
            "verdict": self.verdict,
            "runsNeeded": self.runs_needed,
        }
        if self.cases_left_out is not None:
            data["casesLeftOut"] = self.cases_left_out
        return data


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
        """What fails the comparison (exit 1): every (model, case) or model that is worse, or was not (wholly) measured."""
        return tuple(d for d in (*self.cases, *self.models) if d.fails)

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
        needed = None
        if verdict == "no_difference" and with_runs_needed:
            # at the level the correction asks of a lone difference among the m tested (Bonferroni, alpha / m), and
            # more than these arms ran: they did not tell it
            needed = runs_needed(base.rate, cand.rate, alpha / len(testable), POWER)
            needed = None if needed is None else max(needed, max(base.scored, cand.scored) + 1)
        interval = newcombe_interval(base.passed, base.scored, cand.passed, cand.scored)
        differences.append(Difference(model, case, base, cand, delta, interval, p_values[index], q_value, verdict, needed))
    return differences


def judge_pools(pools: Sequence[tuple[str, str | None, Pool]], alpha: float) -> list[Difference]:
    """Each (model, label, pool) tested as `judge_differences` does, BH over the pools; a pool with a left-out case
    is never `better` (inconclusive, its test kept): the cases it lacks could have gone either way."""
    differences = judge_differences([(model, label, pool.baseline, pool.candidate) for model, label, pool in pools], alpha, with_runs_needed=False)
    judged = []
    for difference, (_, _, pool) in zip(differences, pools, strict=True):
        verdict: Verdict = "inconclusive" if pool.cases_left_out and difference.verdict == "better" else difference.verdict
        judged.append(replace(difference, verdict=verdict, cases_left_out=pool.cases_left_out))
    return judged


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
    """The comparison of two runs' stored metric sets: every (model, case) and model either run has, baseline order first.

    A model's row pools its stored case counts over the cases scored in both arms (`pool_cases`).
    """
    cases = _pairs(baseline, candidate)
    models = pool_cases((model, base, cand) for model, _, base, cand in cases)
    return Comparison(
        comparison_id=comparison_id,
        golden_path=golden_path,
        candidate=candidate_source,
        alpha=alpha,
        runs=runs,
        baseline_run_id=baseline_run_id,
        candidate_run_id=candidate_run_id,
        cases=tuple(judge_differences(cases, alpha)),
        models=tuple(judge_pools([(model, None, pool) for model, pool in models.items()], alpha)),
    )


def _pairs(baseline: Sequence[MetricSet], candidate: Sequence[MetricSet]) -> list[tuple[str, str, ArmCounts, ArmCounts]]:
    def by_key(sets: Sequence[MetricSet]) -> Mapping[tuple[str, str], MetricSet]:
        return {(s.model, s.case_id): s for s in sets if s.scope == "case"}

    base, cand = by_key(baseline), by_key(candidate)
    keys = list(dict.fromkeys([*base, *cand]))
    return [(model, case_id, ArmCounts.from_metrics(base.get((model, case_id))), ArmCounts.from_metrics(cand.get((model, case_id)))) for model, case_id in keys]
