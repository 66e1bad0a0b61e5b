"""Pure logic: per-attempt scores reduced to per-case summaries and per-model metrics (Layer 1 scoring).

Every rate is taken over the attempts it applies to, and is None when none do:
a model that met no negative case has no over-call rate, not a rate of 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from evalcore.golden.model import CaseKind, GoldenCase
from evalcore.records import AttemptScore
from evalcore.scoring.stats import gate_passed, pass_at_k, pass_hat_k, pass_rate, wilson_interval

T = TypeVar("T")


@dataclass(frozen=True)
class ScoredAttempt:
    model: str
    case: GoldenCase
    attempt: int  # 1-based index among the case's runs for this model
    score: AttemptScore
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None  # None when the price is unknown


@dataclass(frozen=True)
class CaseSummary:
    model: str
    case_id: str
    kind: CaseKind
    passes: int
    runs: int
    pass_rate: float
    pass_hat_k: float  # k = runs: 1.0 only when every run passed
    pass_at_k: float  # k = 1, which equals pass_rate; kept for BFCL-style reporting
    pass_rate_interval: tuple[float, float]  # Wilson 95%
    gate_passed: bool  # hard: runs/runs, soft: ceil(0.8·runs)
    failing_reasons: tuple[tuple[str, int], ...]  # (reason, attempts that gave it), most common first


@dataclass(frozen=True)
class ModelMetrics:
    model: str
    attempts: int
    selection_accuracy: float  # over all attempts
    argument_accuracy: float | None  # over attempts with a correct selection on a positive case
    sequence_accuracy: float | None  # over attempts of cases with an expected sequence
    over_call_rate: float | None  # over attempts of negative cases: share that called any tool
    task_completion: float | None  # over attempts a judge scored
    pass_rate: float  # over all attempts
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    mean_input_tokens: float | None  # per attempt, over attempts that reported a count
    mean_output_tokens: float | None
    cost_usd: float | None  # total; None when any attempt's cost is unknown
    cost_per_correct_usd: float | None  # cost_usd / passed attempts; None when none passed


def case_summaries(attempts: Iterable[ScoredAttempt]) -> list[CaseSummary]:
    """One summary per (model, case id), in the order the pairs first appear."""
    groups: dict[tuple[str, str], list[ScoredAttempt]] = {}
    for attempt in attempts:
        groups.setdefault((attempt.model, attempt.case.id), []).append(attempt)
    return [_summarise_case(model, group) for (model, _), group in groups.items()]


def model_metrics(attempts: Iterable[ScoredAttempt]) -> dict[str, ModelMetrics]:
    """Metrics per model, keyed by model name in the order models first appear."""
    groups: dict[str, list[ScoredAttempt]] = {}
    for attempt in attempts:
        groups.setdefault(attempt.model, []).append(attempt)
    return {model: _model_metrics(model, group) for model, group in groups.items()}


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0 <= q <= 100) by linear interpolation between closest ranks.

        h = (N - 1) · q / 100
        P_q = x[floor(h)] + (h - floor(h)) · (x[floor(h) + 1] - x[floor(h)])

    over the sorted values x[0..N-1]: Hyndman & Fan 1996 ("Sample Quantiles in
    Statistical Packages", The American Statistician 50(4)) definition 7, the
    default of numpy.percentile and R's quantile(), Excel's PERCENTILE.INC. It
    interpolates rather than picking a nearest rank so that p95 of five latencies
    moves with the slowest one instead of being it. None for no values.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within 0..100, got {q}")
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (position - lower) * (ordered[upper] - ordered[lower])


def _summarise_case(model: str, group: list[ScoredAttempt]) -> CaseSummary:
    case = group[0].case
    runs = len(group)
    passes = sum(attempt.score.passed for attempt in group)
    reasons = Counter(reason for attempt in group if not attempt.score.passed for reason in attempt.score.reasons)
    return CaseSummary(
        model=model,
        case_id=case.id,
        kind=case.kind,
        passes=passes,
        runs=runs,
        pass_rate=_defined(pass_rate(passes, runs)),
        pass_hat_k=_defined(pass_hat_k(passes, runs, runs)),
        pass_at_k=_defined(pass_at_k(passes, runs, 1)),
        pass_rate_interval=_defined(wilson_interval(passes, runs)),
        gate_passed=gate_passed(case.kind, passes, runs),
        failing_reasons=tuple(reasons.most_common()),
    )


def _model_metrics(model: str, group: list[ScoredAttempt]) -> ModelMetrics:
    scores = [attempt.score for attempt in group]
    latencies = [attempt.latency_ms for attempt in group if attempt.latency_ms is not None]
    costs = [attempt.cost_usd for attempt in group]
    total_cost = None if any(cost is None for cost in costs) else sum(cost for cost in costs if cost is not None)
    correct = sum(score.passed for score in scores)
    return ModelMetrics(
        model=model,
        attempts=len(group),
        selection_accuracy=_defined(_share(scores, lambda score: score.selection_correct)),
        argument_accuracy=_share(scores, lambda score: score.args_correct),
        sequence_accuracy=_share(scores, lambda score: score.sequence_correct),
        over_call_rate=_share(scores, lambda score: score.over_call),
        task_completion=_share(scores, lambda score: score.task_completed),
        pass_rate=_defined(_share(scores, lambda score: score.passed)),
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        mean_input_tokens=_mean([attempt.input_tokens for attempt in group]),
        mean_output_tokens=_mean([attempt.output_tokens for attempt in group]),
        cost_usd=total_cost,
        cost_per_correct_usd=total_cost / correct if total_cost is not None and correct else None,
    )


def _share(scores: list[AttemptScore], verdict: Callable[[AttemptScore], bool | None]) -> float | None:
    """True verdicts / applicable verdicts, where None marks a verdict that does not apply."""
    applicable = [value for value in map(verdict, scores) if value is not None]
    return sum(applicable) / len(applicable) if applicable else None


def _mean(values: list[int | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None


def _defined(value: T | None) -> T:
    # Every group here has at least one attempt, so these estimates always exist.
    assert value is not None
    return value
