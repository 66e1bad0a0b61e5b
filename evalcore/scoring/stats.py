"""Pure logic: statistics over repeated attempts: rates, pass^k, pass@k, intervals, gates, exact tests, FDR (Layer 1).

The one statistics module: drift (`evalcore.drift.stats`) and compare
(`evalcore.compare`) take their hypergeometric weights, Fisher exact tests and
Benjamini-Hochberg q-values from here.

Conventions, the same in every function here:

- c is the number of passing attempts out of n; c outside 0..n, n < 0 or k < 1
  raise ValueError (a bug in the caller, not a property of the model).
- n = 0 (no attempts) gives None: there is no evidence to estimate from. This
  is checked first, so pass^k(0, 0, 5) is None, not an error.
- k > n (n > 0) raises ValueError: the unbiased estimators below need at least k samples.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
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


def hypergeometric_weights(total_passes: int, total_attempts: int, drawn: int) -> tuple[tuple[int, ...], int]:
    """The hypergeometric distribution as integers: (C(K, x) · C(N - K, A - x) for x = 0..A, C(N, A)).

    X ~ H(N, K, A) counts the passes among A attempts drawn from N attempts of
    which K passed; P(X = x) is the x-th weight over the denominator. With a
    2x2 table's margins fixed, one cell is such an X (Fisher 1922), so every
    exact test here is a sum of these weights. Integers, so no tail rounds away.
    """
    if not 0 <= total_passes <= total_attempts or not 0 <= drawn <= total_attempts:
        raise ValueError(f"need 0 <= K <= N and 0 <= A <= N, got K={total_passes}, N={total_attempts}, A={drawn}")
    failures = total_attempts - total_passes
    weights = tuple(math.comb(total_passes, x) * math.comb(failures, drawn - x) if x <= total_passes and drawn - x <= failures else 0 for x in range(drawn + 1))
    return weights, math.comb(total_attempts, drawn)


def fisher_exact_two_sided(c1: int, n1: int, c2: int, n2: int) -> float:
    """Two-sided Fisher exact p-value that c1 of n1 and c2 of n2 passed at the same rate.

    Fisher 1922 ("On the interpretation of χ² from contingency tables, and the
    calculation of P", JRSS 85(1):87-94). With the margins fixed, c2 is
    hypergeometric, X ~ H(n1 + n2, c1 + c2, n2), and the two-sided p-value sums
    the probability of every table no more likely than the one observed:

        p = Σ_{x : P(X = x) <= P(X = c2)} P(X = x)

    (the "minimum likelihood" two-sided test, as R's fisher.test and SciPy's
    fisher_exact compute it; here in exact integer arithmetic, so ties are
    exact too). 1.0 when either arm has no attempt.
    """
    _check_counts(c1, n1)
    _check_counts(c2, n2)
    if n1 == 0 or n2 == 0:
        return 1.0
    weights, denominator = hypergeometric_weights(c1 + c2, n1 + n2, n2)
    observed = weights[c2]
    return min(1.0, sum(w for w in weights if w <= observed) / denominator)


def newcombe_interval(c1: int, n1: int, c2: int, n2: int, z: float = 1.96) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval for the difference of two proportions, p2 - p1 (method 10 of Newcombe 1998,
    "Interval estimation for the difference between independent proportions: comparison of eleven methods",
    Statistics in Medicine 17(8):873-890), built from each arm's Wilson interval (l_i, u_i):

        delta = p2 - p1
        low   = delta - sqrt((p2 - l2)² + (u1 - p1)²)
        high  = delta + sqrt((u2 - p2)² + (p1 - l1)²)

    z = 1.96 gives 95%. It stays inside [-1, 1] and is not zero-width at 0/n
    or n/n. None when either arm has no attempt.
    """
    first, second = wilson_interval(c1, n1, z), wilson_interval(c2, n2, z)
    if first is None or second is None:
        return None
    p1, p2 = c1 / n1, c2 / n2
    (l1, u1), (l2, u2) = first, second
    delta = p2 - p1
    low = delta - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = delta + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return max(-1.0, low), min(1.0, high)


def runs_needed(p1: float, p2: float, alpha: float, power: float = 0.8) -> int | None:
    """Attempts per arm for a two-sided test at level `alpha` to detect rates p1 against p2 with this power.

    The continuity-corrected normal approximation to the power of Fisher's
    exact test (Casagrande, Pike and Smith 1978, "An improved approximate
    formula for calculating sample sizes for comparing two binomial
    distributions", Biometrics 34(3):483-486; Fleiss, Levin and Paik,
    "Statistical Methods for Rates and Proportions", 3rd ed., 2003, eq. 4.14):

        p̄ = (p1 + p2) / 2,  Δ = |p2 - p1|
        n = [z_{1-α/2} · sqrt(2 p̄ (1 - p̄)) + z_{power} · sqrt(p1 (1 - p1) + p2 (1 - p2))]² / Δ²
        n' = n / 4 · (1 + sqrt(1 + 4 / (n Δ)))²

    rounded up. None when p1 = p2: no number of runs detects a difference of zero.
    """
    if not (0 <= p1 <= 1 and 0 <= p2 <= 1):
        raise ValueError(f"rates must lie in [0, 1], got {p1}, {p2}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha}, {power}")
    delta = abs(p2 - p1)
    if delta == 0:
        return None
    normal = statistics.NormalDist()
    mean = (p1 + p2) / 2
    root = normal.inv_cdf(1 - alpha / 2) * math.sqrt(2 * mean * (1 - mean)) + normal.inv_cdf(power) * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    n = root * root / (delta * delta)
    corrected = n / 4 * (1 + math.sqrt(1 + 4 / (n * delta))) ** 2 if n > 0 else 1.0
    return max(1, math.ceil(corrected - 1e-9))


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg q-values, in the order given (Benjamini and Hochberg 1995, "Controlling the false discovery
    rate: a practical and powerful approach to multiple testing", JRSS B 57(1):289-300):

        q_(i) = min_{j >= i} min(1, m · p_(j) / j)

    over the m p-values in ascending order. Rejecting every test with q <= α
    keeps the expected share of false discoveries among them at most α.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    q_values = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        running = min(running, m * p_values[index] / rank)
        q_values[index] = min(1.0, running)
    return q_values


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
