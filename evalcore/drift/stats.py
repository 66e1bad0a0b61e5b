"""Pure logic: the statistics of change-point detection on pass/fail counts: exact split tests, their scan, FDR (Layer 1).

A (model, case) history is a sequence of runs, run i with x_i passes of n_i
attempts. A candidate change point k splits a segment of it into "before"
(runs lo..k-1: S_k passes of B_k attempts) and "after" (runs k..hi: K - S_k of
N - B_k), with K and N the segment's totals.

- `split_p_value`: the one-sided Fisher exact test of one split (Fisher 1922,
  "On the interpretation of χ² from contingency tables, and the calculation of
  P", JRSS 85(1):87-94). With the margins fixed, the passes after the split are
  hypergeometric, X ~ H(N, K, A) with A = N - B_k attempts after, and for a drop

      p_k = P(X <= K - S_k) = Σ_{x <= K - S_k} C(K, x) · C(N - K, A - x) / C(N, A)

  (for a rise, P(X >= K - S_k)).
- `scan_test`: every candidate split is tested, and the smallest p_k is itself
  corrected for having looked at all of them, exactly: under "no change" every
  arrangement of the K passes over the N attempts is equally likely
  (conditioning on K removes the unknown pass rate), so

      p_scan = P(min_k p_k <= t | K),  t = the observed min_k p_k
             = 1 - #{arrangements with p_k > t at every split} / C(N, K)

  counted by a recursion over the runs: the number of ways to place s passes in
  the first runs is Σ_x ways(s - x) · C(n_i, x), keeping only the partial sums
  S_k that pass every split's test. This is the exact conditional null
  distribution of a binomial change-point statistic, computed recursively as in
  Worsley 1983 ("The power of likelihood ratio and cumulative sum tests for a
  change in a binomial probability", Biometrika 70(2):455-464), with Fisher's
  p_k as the statistic. Integer arithmetic (`math.comb`) throughout, no scipy.
- `benjamini_hochberg` (from `evalcore.scoring.stats`): q-values for the tests of one night (Benjamini and
  Hochberg 1995, "Controlling the false discovery rate: a practical and
  powerful approach to multiple testing", JRSS B 57(1):289-300):
  q_(i) = min_{j >= i} min(1, m · p_(j) / j) over the m p-values in ascending order.
  Tests that cannot reach the level whatever their data are left out of m
  (`discrete_bh`, Tarone 1990; Gilbert 2005).
- `split_log_likelihood`: the profile log-likelihood of a change at k (Hinkley
  and Hinkley 1970, "Inference about the change-point in a sequence of binomial
  variables", Biometrika 57(3):477-488), ℓ(k) = ℓ(S_k, B_k) + ℓ(K - S_k, N - B_k)
  with ℓ(s, n) = s·log(s/n) + (n - s)·log(1 - s/n); the change points within
  a few units of its maximum are the plausible ones.
- `step_over_outlier`: how much better a lasting change explains the runs
  after a split than one outlier night does, as a log-likelihood ratio:

      Λ = [ℓ(before) + ℓ(after)] - max_j [ℓ(before + after without run j) + ℓ(run j)]

  "step": one rate before, another for every run after; "outlier": every run
  at the before rate except one night j with a rate of its own (the
  mean-shift outlier model, Beckman and Cook 1983, "Outlier..........s",
  Technometrics 25(2):119-149). Both have one free rate beyond the baseline,
  so Λ > 0 says the step fits better. One bad night among good ones has
  Λ < 0 whatever its size.
- `night_correlation` and `effective_counts`: the tests above take a night's
  attempts as independent. A model that answers them alike (temperature 0)
  gives fewer observations than attempts: a case it fails one night in ten
  shows 5/5 nine nights and 0/5 the tenth, which the tests would read as a
  drop. Under independence a run of n attempts at rate p is mixed (some pass,
  some fail) with probability e = 1 - p^n - (1 - p)^n; with the mixture "all
  alike with probability ρ, independent otherwise" it is mixed with
  probability (1 - ρ)·e, so

      ρ̂ = 1 - (mixed runs observed) / Σ e,

  with p the pooled rate on each side of the segment's best change point (so
  a clean step from 5/5 to 0/5 is not mistaken for alike attempts). ρ̂ is
  taken as 0 unless the mixed runs are fewer than Σ e by more than 2.33
  standard deviations (Σ e(1 - e)), one-sided at 1%, and Σ e >= 4. The
  counts are then divided by the design effect d = 1 + ρ̂(n - 1) (Kish 1965,
  "Survey Sampling", §8.2), the adjustment of Rao and Scott 1992 ("A simple
  method for the analysis of clustered binary data", Biometrics 48(2):577-585),
  rounded to whole attempts for the exact tests: 35/35 -> 0/5 at ρ̂ = 1 is
  tested as 7/7 -> 0/1.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from evalcore.scoring.stats import benjamini_hochberg, hypergeometric_weights

Direction = Literal["drop", "rise"]


@dataclass(frozen=True)
class Counts:
    """Passes of attempts: one run, or several pooled."""

    passes: int
    attempts: int

    def __post_init__(self) -> None:
        if self.attempts < 0 or not 0 <= self.passes <= self.attempts:
            raise ValueError(f"need 0 <= passes <= attempts, got {self.passes}/{self.attempts}")

    @property
    def rate(self) -> float | None:
        return self.passes / self.attempts if self.attempts else None


@dataclass(frozen=True)
class ScanResult:
    """The scan of one segment: the exact p-value over every candidate split, and the split that gave the smallest p_k.

    `split` is the index (into the segment) of the first run after the best
    change point. `exact` is False when min p_k was above `screen`, in which
    case `p_value` is min p_k itself, a lower bound of the scan p-value (the
    test cannot be significant, so the exact count is skipped).
    `attainable` is a lower bound of the smallest p-value the test could give
    with these totals at all: min p_k with every failure (for a drop; every
    pass for a rise) packed into the last attempts, which minimises every p_k
    at once. A history with no failure can never show a drop (attainable 1).
    """

    p_value: float
    split: int
    min_split_p: float
    exact: bool
    attainable: float


def split_p_value(before: Counts, after: Counts, direction: Direction = "drop") -> float:
    """One-sided Fisher exact p-value that `after`'s pass rate is lower ("drop") or higher ("rise") than `before`'s."""
    numerator, denominator = _split_tail(before.passes + after.passes, before.attempts + after.attempts, after.attempts, after.passes, direction)
    return float(Fraction(numerator, denominator))


def scan_test(runs: Sequence[Counts], splits: Sequence[int], direction: Direction = "drop", *, screen: float = 1.0) -> ScanResult | None:
    """The exact scan test of a segment over the candidate `splits` (indices of a first run after); None without a split.

    See the module docstring for the formula. `screen` skips the exact count when
    even the best single split has p_k > screen (its p-value cannot be smaller).
    """
    candidates = sorted(set(splits))
    if not candidates:
        return None
    if candidates[0] < 1 or candidates[-1] >= len(runs):
        raise ValueError(f"split indices must lie in 1..{len(runs) - 1} (a run before and after), got {candidates}")
    total_passes = sum(r.passes for r in runs)
    total_attempts = sum(r.attempts for r in runs)
    prefix_passes, prefix_attempts = _prefix_sums(runs)
    tails: dict[int, Sequence[int]] = {}
    best: tuple[Fraction, int] | None = None
    attainable = Fraction(1)
    for k in candidates:
        after_attempts = total_attempts - prefix_attempts[k]
        table, denominator = _tail_table(total_passes, total_attempts, after_attempts, direction)
        tails[k] = table
        p_k = Fraction(table[total_passes - prefix_passes[k]], denominator)
        if best is None or p_k < best[0]:
            best = (p_k, k)
        packed = after_attempts - min(total_attempts - total_passes, after_attempts) if direction == "drop" else min(total_passes, after_attempts)
        attainable = min(attainable, Fraction(table[packed], denominator))
    assert best is not None
    threshold, best_split = best
    if float(threshold) > screen:
        return ScanResult(float(threshold), best_split, float(threshold), exact=False, attainable=float(attainable))
    kept = _arrangements_above(runs, tails, prefix_attempts, total_passes, threshold)
    p_value = 1 - Fraction(kept, math.comb(total_attempts, total_passes))
    return ScanResult(float(p_value), best_split, float(threshold), exact=True, attainable=float(attainable))


def _arrangements_above(
    runs: Sequence[Counts], tails: Mapping[int, Sequence[int]], prefix_attempts: Sequence[int], total_passes: int, threshold: Fraction
) -> int:
    """How many arrangements of the passes over the runs' attempts keep every split's p_k above the threshold."""
    total_attempts = prefix_attempts[-1]
    ways: dict[int, int] = {0: 1}  # passes placed in the runs so far -> weighted count of arrangements
    for index, run in enumerate(runs):
        if index in tails:
            ways = _above_threshold(ways, tails[index], total_passes, math.comb(total_attempts, total_attempts - prefix_attempts[index]), threshold)
        grown: dict[int, int] = {}
        for s, w in ways.items():
            for x in range(min(run.attempts, total_passes - s) + 1):
                grown[s + x] = grown.get(s + x, 0) + w * math.comb(run.attempts, x)
        ways = grown
    return ways.get(total_passes, 0)


def discrete_bh(p_values: Sequence[float], attainable: Sequence[float], level: float) -> tuple[list[float], int]:
    """BH q-values over the tests that can reach `level` at all (Gilbert 2005), and how many those are; 1.0 for the others.

    A discrete test may be unable to give a small p-value whatever its data
    (a case that passed every attempt cannot show a drop). Counting it in m
    only weakens the others. Following Tarone 1990 ("A modified Bonferroni
    method for discrete data", Biometrics 46(2):515-522) and Gilbert 2005 ("A
    modified false discovery rate multiple-comparisons procedure for discrete
    data", JRSS C 54(1):143-158): with p*_i the smallest p-value test i can
    attain and M(K) = #{i : p*_i < level / K}, take the smallest K with
    M(K) <= K, and run BH over those M(K) tests only.
    """
    m = len(p_values)
    chosen = m
    for k in range(1, m + 1):
        if sum(p < level / k for p in attainable) <= k:
            chosen = k
            break
    family = [i for i in range(m) if attainable[i] < level / chosen]
    q_values = [1.0] * m
    for index, q_value in zip(family, benjamini_hochberg([p_values[i] for i in family]), strict=True):
        q_values[index] = q_value
    return q_values, len(family)


def split_log_likelihood(runs: Sequence[Counts], split: int) -> float:
    """ℓ(k): the binomial log-likelihood of the segment with one pass rate before run `split` and another from it on."""
    before = Counts(sum(r.passes for r in runs[:split]), sum(r.attempts for r in runs[:split]))
    after = Counts(sum(r.passes for r in runs[split:]), sum(r.attempts for r in runs[split:]))
    return _binomial_log_likelihood(before) + _binomial_log_likelihood(after)


def step_over_outlier(before: Sequence[Counts], after: Sequence[Counts]) -> float:
    """Λ: the log-likelihood of a lasting change at the split minus that of one outlier run after it (module docstring)."""
    step = _binomial_log_likelihood(pooled(before)) + _binomial_log_likelihood(pooled(after))
    outlier = max(_binomial_log_likelihood(pooled([*before, *after[:j], *after[j + 1 :]])) + _binomial_log_likelihood(after[j]) for j in range(len(after)))
    return step - outlier


CORRELATION_Z = 2.33  # one-sided 1%: mixed runs this many standard deviations below independence before ρ̂ > 0
CORRELATION_MIN_EXPECTED = 4.0  # expected mixed runs below this carry too little evidence either way


def night_correlation(segments: Sequence[Sequence[Counts]]) -> float:
    """ρ̂ in [0, 1], how alike the attempts of one night are, over a model's segments (module docstring); 0 without evidence."""
    observed = expected = variance = 0.0
    for runs in segments:
        split = max(range(1, len(runs)), key=lambda k: split_log_likelihood(runs, k)) if len(runs) > 1 else len(runs)
        for side in (runs[:split], runs[split:]):
            rate = pooled(side).rate
            if rate is None:
                continue
            for run in side:
                if run.attempts < 2:
                    continue
                mixed = 1 - rate**run.attempts - (1 - rate) ** run.attempts
                observed += 0 < run.passes < run.attempts
                expected += mixed
                variance += mixed * (1 - mixed)
    if expected < CORRELATION_MIN_EXPECTED or observed >= expected - CORRELATION_Z * math.sqrt(variance):
        return 0.0
    return 1 - observed / expected


def effective_counts(counts: Counts, correlation: float) -> Counts:
    """The counts divided by the design effect d = 1 + ρ(n - 1), rounded to whole attempts (at least one)."""
    if correlation <= 0 or counts.attempts == 0:
        return counts
    attempts = max(1, round(counts.attempts / (1 + correlation * (counts.attempts - 1))))
    return Counts(round(counts.passes * attempts / counts.attempts), attempts)


def pooled(runs: Sequence[Counts]) -> Counts:
    return Counts(sum(r.passes for r in runs), sum(r.attempts for r in runs))


def _binomial_log_likelihood(counts: Counts) -> float:
    s, n = counts.passes, counts.attempts
    return sum(c * math.log(c / n) for c in (s, n - s) if c)


def _split_tail(total_passes: int, total_attempts: int, after_attempts: int, after_passes: int, direction: Direction) -> tuple[int, int]:
    table, denominator = _tail_table(total_passes, total_attempts, after_attempts, direction)
    return table[after_passes], denominator


@functools.lru_cache(maxsize=1 << 16)  # the same margins recur on every night and every split of a store's histories
def _tail_table(total_passes: int, total_attempts: int, after_attempts: int, direction: Direction) -> tuple[tuple[int, ...], int]:
    """Numerators of P(X <= c) ("drop") or P(X >= c) ("rise") for c = 0..after_attempts, X ~ H(N, K, A); and C(N, A)."""
    pmf, denominator = hypergeometric_weights(total_passes, total_attempts, after_attempts)
    table = [0] * (after_attempts + 1)
    running = 0
    indices = range(after_attempts + 1) if direction == "drop" else range(after_attempts, -1, -1)
    for c in indices:
        running += pmf[c]
        table[c] = running
    return tuple(table), denominator


def _prefix_sums(runs: Sequence[Counts]) -> tuple[list[int], list[int]]:
    passes, attempts = [0], [0]
    for run in runs:
        passes.append(passes[-1] + run.passes)
        attempts.append(attempts[-1] + run.attempts)
    return passes, attempts


def _above_threshold(ways: dict[int, int], tail: Sequence[int], total_passes: int, denominator: int, threshold: Fraction) -> dict[int, int]:
    """The partial sums s whose split test p_k = tail[K - s] / denominator stays above the threshold (and can still be completed)."""
    kept: dict[int, int] = {}
    for s, w in ways.items():
        after_passes = total_passes - s
        if after_passes < len(tail) and tail[after_passes] * threshold.denominator > threshold.numerator * denominator:
            kept[s] = w
    return kept
