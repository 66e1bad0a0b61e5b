"""Pure logic: how far a judge agrees with human labels: Cohen's κ with its 95% interval, TPR, TNR, and a status (Layer 1).

Each labelled attempt is one pair (the judge's verdict, the human's label), both pass or fail. With the confusion
counts a = judge pass & human pass, b = judge pass & human fail, c = judge fail & human pass, d = judge fail & human
fail and n = a + b + c + d:

    p_o = (a + d) / n                                   raw agreement
    p_e = p_J·p_H + (1 − p_J)(1 − p_H)                  chance agreement, p_J = (a + b)/n, p_H = (a + c)/n
    κ   = (p_o − p_e) / (1 − p_e)                       Cohen (1960), "A coefficient of agreement for nominal scales"
    TPR = a / (a + c)                                   the judge passes what humans pass
    TNR = d / (b + d)                                   the judge fails what humans fail

κ is *undefined* when n = 0, and when every human label is of one class (there is nothing for the judge to
distinguish, and p_e can reach 1): it is None with a reason, never NaN. TPR (TNR) is None without a human pass (fail).

The 95% interval is κ ± 1.96·SE, clipped to [−1, 1], with the large-sample standard error of Fleiss, Cohen & Everitt
(1969, "Large sample standard errors of kappa and weighted kappa", Psychol. Bull. 72:323), p_ij the cell shares
(i the judge, j the human), p_i· and p_·j the marginals:

    SE² = [ Σ_i p_ii (1 − (p_i· + p_·i)(1 − κ))² + (1 − κ)² Σ_{i≠j} p_ij (p_·i + p_j·)² − (κ − p_e(1 − κ))² ] / (n (1 − p_e)²)

A closed form, so the same labels give the same interval everywhere (no seed) and a reader can check it by hand; at
the sizes where it decides anything (n ≥ 50 for `trusted`) the normal approximation holds well enough.

The status (thresholds are `StatusThresholds`, defaults below):

    uncalibrated   n < 30, or κ undefined
    unreliable     n ≥ 30 and κ < 0.4
    trusted        n ≥ 50 and the interval's lower bound ≥ 0.6
    advisory       otherwise
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from evalcore.records import JudgeStatus, LabelledVerdict

Z_95: Final = 1.959963984540054


@dataclass(frozen=True)
class StatusThresholds:
    """When labels calibrate a judge (`min_labels`), when κ marks it unreliable, and when it has earned trust."""

    min_labels: int = 30
    unreliable_below: float = 0.4
    trusted_min_labels: int = 50
    trusted_lower_bound: float = 0.6


DEFAULT_THRESHOLDS: Final = StatusThresholds()


@dataclass(frozen=True)
class Confusion:
    """The four counts of judge verdicts against human labels."""

    judge_pass_human_pass: int = 0
    judge_pass_human_fail: int = 0
    judge_fail_human_pass: int = 0
    judge_fail_human_fail: int = 0

    @property
    def n(self) -> int:
        return self.judge_pass_human_pass + self.judge_pass_human_fail + self.judge_fail_human_pass + self.judge_fail_human_fail

    def to_json(self) -> dict[str, int]:
        return {
            "judgePass_humanPass": self.judge_pass_human_pass,
            "judgePass_humanFail": self.judge_pass_human_fail,
            "judgeFail_humanPass": self.judge_fail_human_pass,
            "judgeFail_humanFail": self.judge_fail_human_fail,
        }


def confusion(pairs: Iterable[tuple[bool, bool]]) -> Confusion:
    """The counts of (judge passed, human passed) pairs."""
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for judge, human in pairs:
        counts[(bool(judge), bool(human))] += 1
    return Confusion(counts[(True, True)], counts[(True, False)], counts[(False, True)], counts[(False, False)])


@dataclass(frozen=True)
class Agreement:
    """A judge's agreement with human labels under one rubric (see the module docstring for every figure)."""

    model: str
    rubric_hash: str
    confusion: Confusion
    agreement: float | None
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    tpr: float | None
    tnr: float | None
    status: JudgeStatus
    reason: str  # why the status; says when κ is undefined
    thresholds: StatusThresholds = field(default=DEFAULT_THRESHOLDS)

    @property
    def n(self) -> int:
        return self.confusion.n

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "rubricHash": self.rubric_hash,
            "n": self.n,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "kappaCi": list(self.kappa_ci) if self.kappa_ci is not None else None,
            "tpr": self.tpr,
            "tnr": self.tnr,
            "confusion": self.confusion.to_json(),
            "status": self.status,
            "reason": self.reason,
        }


def cohen_kappa(counts: Confusion) -> tuple[float | None, str | None]:
    """κ, or None and why it is undefined (no labels; every human label of one class)."""
    n = counts.n
    if n == 0:
        return None, "no labelled attempts with this judge's verdict"
    human_pass = counts.judge_pass_human_pass + counts.judge_fail_human_pass
    if human_pass in (0, n):
        return None, f"every human label is {'pass' if human_pass else 'fail'}: κ needs labels of both classes"
    p_o = (counts.judge_pass_human_pass + counts.judge_fail_human_fail) / n
    p_e = _chance_agreement(counts)
    return (p_o - p_e) / (1 - p_e), None


def kappa_interval(counts: Confusion, kappa: float, z: float = Z_95) -> tuple[float, float]:
    """κ ± z·SE, SE the large-sample standard error of Fleiss, Cohen & Everitt (1969), clipped to [−1, 1]."""
    n = counts.n
    cells = [[counts.judge_pass_human_pass / n, counts.judge_pass_human_fail / n], [counts.judge_fail_human_pass / n, counts.judge_fail_human_fail / n]]
    rows = [cells[0][0] + cells[0][1], cells[1][0] + cells[1][1]]  # the judge's marginals
    cols = [cells[0][0] + cells[1][0], cells[0][1] + cells[1][1]]  # the humans'
    p_e = _chance_agreement(counts)
    diagonal = sum(cells[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
    off = (1 - kappa) ** 2 * sum(cells[i][j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    variance = (diagonal + off - (kappa - p_e * (1 - kappa)) ** 2) / (n * (1 - p_e) ** 2)
    se = math.sqrt(max(variance, 0.0))  # rounding can take a zero variance (perfect agreement) a hair below 0
    return max(-1.0, kappa - z * se), min(1.0, kappa + z * se)


def agreement(model: str, rubric_hash: str, counts: Confusion, thresholds: StatusThresholds = DEFAULT_THRESHOLDS) -> Agreement:
    """Every figure of the module docstring for one judge and rubric."""
    n = counts.n
    kappa, undefined = cohen_kappa(counts)
    interval = kappa_interval(counts, kappa) if kappa is not None else None
    human_pass = counts.judge_pass_human_pass + counts.judge_fail_human_pass
    human_fail = counts.judge_pass_human_fail + counts.judge_fail_human_fail
    status, reason = judge_status(n, kappa, interval, thresholds)
    if undefined is not None:
        reason = f"{reason}; κ undefined: {undefined}"
    return Agreement(
        model=model,
        rubric_hash=rubric_hash,
        confusion=counts,
        agreement=(counts.judge_pass_human_pass + counts.judge_fail_human_fail) / n if n else None,
        kappa=kappa,
        kappa_ci=interval,
        tpr=counts.judge_pass_human_pass / human_pass if human_pass else None,
        tnr=counts.judge_fail_human_fail / human_fail if human_fail else None,
        status=status,
        reason=reason,
        thresholds=thresholds,
    )


def judge_status(
    n: int, kappa: float | None, interval: tuple[float, float] | None, thresholds: StatusThresholds = DEFAULT_THRESHOLDS
) -> tuple[JudgeStatus, str]:
    """The status of the module docstring's table, and a one-line reason."""
    if n < thresholds.min_labels:
        return "uncalibrated", f"{n} label(s), fewer than {thresholds.min_labels}"
    if kappa is None or interval is None:
        return "uncalibrated", f"{n} labels, but κ cannot be computed from them"
    if kappa < thresholds.unreliable_below:
        return "unreliable", f"κ {kappa:.2f} below {thresholds.unreliable_below:g}"
    if n >= thresholds.trusted_min_labels and interval[0] >= thresholds.trusted_lower_bound:
        return "trusted", f"{n} labels, κ's 95% interval from {interval[0]:.2f} (at least {thresholds.trusted_lower_bound:g})"
    if n < thresholds.trusted_min_labels:
        return "advisory", f"{n} labels, fewer than {thresholds.trusted_min_labels} for trust"
    return "advisory", f"κ's 95% interval from {interval[0]:.2f}, below {thresholds.trusted_lower_bound:g} for trust"


def agreements(
    verdicts: Sequence[LabelledVerdict], judges: Iterable[tuple[str, str]] = (), thresholds: StatusThresholds = DEFAULT_THRESHOLDS
) -> list[Agreement]:
    """One `Agreement` per (judge model, rubric hash) among `verdicts`, and one (n = 0) for each of `judges` without a
    label, sorted by judge and rubric."""
    grouped: dict[tuple[str, str], list[tuple[bool, bool]]] = {key: [] for key in judges}
    for verdict in verdicts:
        grouped.setdefault((verdict.judge_model, verdict.rubric_hash), []).append((verdict.judge_passed, verdict.human_passed))
    return [agreement(model, rubric, confusion(pairs), thresholds) for (model, rubric), pairs in sorted(grouped.items())]


def find(found: Sequence[Agreement], model: str, rubric_hash: str, thresholds: StatusThresholds = DEFAULT_THRESHOLDS) -> Agreement:
    """The agreement of this judge under this rubric; with no label, its n = 0 agreement (`uncalibrated`)."""
    return next((a for a in found if a.model == model and a.rubric_hash == rubric_hash), None) or agreement(model, rubric_hash, Confusion(), thresholds)


def thresholds_json(thresholds: StatusThresholds) -> Mapping[str, float]:
    return {
        "minLabels": thresholds.min_labels,
        "unreliableBelow": thresholds.unreliable_below,
        "trustedMinLabels": thresholds.trusted_min_labels,
        "trustedLowerBound": thresholds.trusted_lower_bound,
    }


def _chance_agreement(counts: Confusion) -> float:
    n = counts.n
    judge_pass = (counts.judge_pass_human_pass + counts.judge_pass_human_fail) / n
    human_pass = (counts.judge_pass_human_pass + counts.judge_fail_human_pass) / n
    return judge_pass * human_pass + (1 - judge_pass) * (1 - human_pass)


def labelling_queue(candidates: Sequence[tuple[tuple[str, str, str, int], bool]], size: int) -> list[tuple[tuple[str, str, str, int], bool]]:
    """The attempts to label next: `size` of the unlabelled `candidates` ((run_id, model, case_id, attempt), the judge's
    verdict), a sample stratified over model × case × verdict.

    Strata are taken in turn, one attempt each per round, judge-pass and judge-fail strata alternating, so the first
    rounds cover every model and case with both verdicts (κ needs both, and the dangerous cell, judge pass & human fail,
    is only found among the judge's passes). Within a stratum the order is a hash of the attempt's key: spread over
    runs and attempts, yet the same queue for the same store.
    """
    strata: dict[tuple[str, str, bool], list[tuple[tuple[str, str, str, int], bool]]] = {}
    for key, verdict in candidates:
        strata.setdefault((key[1], key[2], verdict), []).append((key, verdict))
    for members in strata.values():
        members.sort(key=lambda item: hashlib.sha256(repr(item[0]).encode("utf-8")).hexdigest())
    passes = sorted(stratum for stratum in strata if stratum[2])
    fails = sorted(stratum for stratum in strata if not stratum[2])
    order = [stratum for pair in itertools.zip_longest(passes, fails) for stratum in pair if stratum is not None]
    queue: list[tuple[tuple[str, str, str, int], bool]] = []
    depth = 0
    while len(queue) < size and any(depth < len(strata[stratum]) for stratum in order):
        queue.extend(strata[stratum][depth] for stratum in order if depth < len(strata[stratum]))
        depth += 1
    return queue[:size]


def fleiss_kappa(votes: Sequence[Sequence[bool]]) -> float | None:
    """Fleiss' κ (1971, "Measuring nominal scale agreement among many raters", Psychol. Bull. 76:378) of N subjects
    each rated by the same n ≥ 2 raters into pass or fail; here the subjects are attempts and the raters a judge's
    repeated gradings. With n_ij the votes of subject i for class j:

        P_i = (Σ_j n_ij² − n) / (n (n − 1))      p_j = Σ_i n_ij / (N n)
        κ = (P̄ − P̄_e) / (1 − P̄_e),  P̄ the mean of P_i, P̄_e = Σ_j p_j²

    None when it is undefined: no subject, fewer than two raters, or every vote of one class (P̄_e = 1)."""
    rated = [list(subject) for subject in votes if len(subject) >= 2]
    if not rated or len({len(subject) for subject in rated}) != 1:
        return None
    raters, subjects = len(rated[0]), len(rated)
    passes = [sum(subject) for subject in rated]
    share_pass = sum(passes) / (subjects * raters)
    expected = share_pass**2 + (1 - share_pass) ** 2
    if expected >= 1.0:
        return None
    observed = sum((p * p + (raters - p) * (raters - p) - raters) / (raters * (raters - 1)) for p in passes) / subjects
    return (observed - expected) / (1 - expected)


def judge_consistency(votes: Mapping[tuple[str, str], Sequence[Sequence[bool]]], repeats: int) -> dict[str, Any]:
    """A judge's agreement with itself over a run graded `repeats` times per attempt: per (model, case) the attempts it
    graded, how many got split votes (a flip) and their share, and over the run the flip rate and Fleiss' κ (null when
    undefined: every vote of one class)."""
    cases = [
        {
            "model": model,
            "case": case_id,
            "judged": len(subjects),
            "flipped": sum(len(set(s)) > 1 for s in subjects),
            "flipRate": sum(len(set(s)) > 1 for s in subjects) / len(subjects) if subjects else None,
        }  # fmt: skip
        for (model, case_id), subjects in sorted(votes.items())
    ]
    every = [subject for subjects in votes.values() for subject in subjects]
    return {
        "repeats": repeats,
        "judged": len(every),
        "flipRate": sum(len(set(s)) > 1 for s in every) / len(every) if every else None,
        "fleissKappa": fleiss_kappa(every),
        "cases": cases,
    }
