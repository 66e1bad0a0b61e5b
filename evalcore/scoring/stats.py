"""Pure logic: statistics over repeated attempts of one case: rates, pass^k, pass@k, intervals, gates (Layer 1).

Conventions, the same in every function here:

- c is the number of passing attempts out of n; c outside 0..n, n < 0 or k < 1
  raise ValueError (a bug in the caller, not a property of the model).
- n = 0 (no attempts) gives None: there is no evidence to estimate from. This
  is checked first, so pass^k(0, 0, 5) is None, not an error.
- k > n (n > 0) raises ValueError: the unbiased estimators below need at least k samples.
"""

from __future__ import annotations

import math
from typing import Final

from evalcore.golden.model import CaseKind

SOFT_GATE_SHARE: Final = (4, 5)  # a soft case must pass at least 4 of every 5 runs (ceil(0.8·n))


def pass_rate(c: int, n: int) -> float | None:
    """The share of attempts that passed: c / n; None when n = 0."""
    _check_counts(c, n)
    return c / n if n else None


def pass_hat_k(c: int, n: int, k: int) -> float | None:
    """pass^k: the probability that k attempts drawn without replacement from n ALL pass.

        pass^k = C(c, k) / C(n, k)

    The consistency metric of tau-bench (Yao, Shinn, Razavi, Narasimhan 2024,
    "tau-bench: A Benchmark for Tool-Agent-User Interaction in Real-World Domains",
    arXiv:2406.12045): an unbiased estimate of p^k for i.i.d. trials.
    With k = n it is 1 when every attempt passed and 0 otherwise.
    """
    _check_counts(c, n, k)
    if n == 0:
        return None
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(c: int, n: int, k: int) -> float | None:
    """pass@k: the probability that at least one of k attempts drawn from n passes.

        pass@k = 1 - C(n - c, k) / C(n, k)

    The unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models
    Trained on Code", arXiv:2107.03374, section 2.1, HumanEval), as reported by
    BFCL-style leaderboards. pass@1 equals the pass rate.
    """
    _check_counts(c, n, k)
    if n == 0:
        return None
    return 1 - math.comb(n - c, k) / math.comb(n, k)


def wilson_interval(c: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval for a binomial proportion (Wilson 1927, "Probable inference,
    the law of succession, and statistical inference", JASA 22(158):209-212).

        p = c / n
        centre = (p + z²/(2n)) / (1 + z²/n)
        half   = z / (1 + z²/n) · sqrt(p(1 - p)/n + z²/(4n²))
        (low, high) = (centre - half, centre + half)

    z = 1.96 gives 95%. Unlike the normal (Wald) interval it stays inside [0, 1] and
    is not zero-width at 0/n or n/n, which is where five runs usually land.
    None when n = 0.
    """
    _check_counts(c, n)
    if n == 0:
        return None
    p = c / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # Rounding can push a bound a hair outside [0, 1] at c = 0 or c = n.
    return max(0.0, centre - half), min(1.0, centre + half)


def required_passes(kind: CaseKind, n: int) -> int:
    """Passes a case needs out of n runs: hard cases all n, soft cases ceil(0.8·n) (4 of 5).

    Integer arithmetic, so 0.8·n's float error cannot move the bar: ceil(4n/5) = -(-4n // 5).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if kind == "hard":
        return n
    if kind == "soft":
        numerator, denominator = SOFT_GATE_SHARE
        return -(-numerator * n // denominator)
    raise ValueError(f"unknown case kind {kind!r} (expected hard or soft)")


def gate_passed(kind: CaseKind, c: int, n: int) -> bool:
    """c >= required_passes(kind, n); a case with no runs (n = 0) has not passed."""
    _check_counts(c, n)
    return n > 0 and c >= required_passes(kind, n)


def _check_counts(c: int, n: int, k: int | None = None) -> None:
    if n < 0 or not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if k is not None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if n and k > n:
            raise ValueError(f"k={k} exceeds n={n}: the estimator needs at least k attempts")


def run_flakiness(c: int, n: int) -> float | None:
    """How much a case's n scored attempts in one run disagreed: 1 - |2·c/n - 1|.

    1 at a coin flip (half passed), 0 when every attempt agreed; None without a scored attempt (all errored: nothing was
    measured). The Flaky page's flakiness is the mean of this over a case's runs.
    """
    if n == 0:
        return None
    _check_counts(c, n)
    return 1 - abs(2 * c / n - 1)
