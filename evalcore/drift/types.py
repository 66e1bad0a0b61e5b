"""Pure data: the typed inputs and outputs of drift detection (Layer 1): one point per run, the settings, the changes found."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Final, Literal

from evalcore.scoring.stats import wilson_interval

DRIFT_SCHEMA_VERSION: Final = 4

ChangeKind = Literal["drop", "recovery"]
Component = Literal["server", "model", "case", "settings", "evalcore"]
Cause = Literal["server", "model", "case", "settings", "evalcore", "ambiguous", "silent"]
Status = Literal["open", "recovered", "withdrawn"]
Confirmation = Literal["provisional", "confirmed", "withdrawn"]
COMPONENTS: Final[tuple[Component, ...]] = ("server", "model", "case", "settings", "evalcore")


@dataclass(frozen=True)
class Fingerprints:
    """What a run of one (model, case) was made with, as stored with the run; compared across a change point.

    `settings` holds the system prompt the model was given and the sampling
    settings, as sorted (name, value) pairs (`system_prompt`, `temperature`,
    `seed`, `max_steps`, `judge`), so a diff can name what changed.
    `server_tools_json` ([{name, description}, ...]) is not compared itself
    (the server fingerprint covers it): it gives the description diff.
    """

    server: str
    model_version: str | None
    case_hash: str
    settings: tuple[tuple[str, str], ...] = ()
    evalcore_version: str = ""
    server_tools_json: str = "[]"


@dataclass(frozen=True)
class RunPoint:
    """One run of one case by one model: `passes` of `attempts` (the scored ones), with the run's fingerprints.

    `complete` is False when the run did not measure every attempt it was asked
    for (it stopped, or an attempt errored, in any case): such a run is never a
    baseline, nor evidence of a change; the detector treats it as a gap. A point
    with no scored attempt (every attempt errored) is a gap as well, never a 0%.
    """

    model: str
    case_id: str
    run_id: str
    run_date: date
    passes: int
    attempts: int
    fingerprints: Fingerprints
    simulated: bool = False  # the model is an offline sim/ model
    complete: bool = True

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.attempts if self.attempts else None


@dataclass(frozen=True)
class DriftSettings:
    """The detector's knobs; the defaults are the ones `bench/drift_sim.py` measured against the targets.

    - `min_baseline`: runs before a candidate change point (in the current regime) for it to be tested.
    - `min_after`: runs from a candidate change point to the newest run; 2, so one bad night alone is never a change.
    - `window`: the most recent runs a test looks at (the baseline and the candidate change points in it).
    - `fdr`: the Benjamini-Hochberg level over the (model × case) tests of one night; a test is significant at q <= fdr.
    - `max_p`: a change also needs p <= this on its own: the monitor's control limit. Each case is tested again every
      night, and BH over one night does not see those repeated looks at the same history; this limit is set from the
      false flags it gives over whole noise-only histories of 21 nights (about 0.6 per 100 at 0.0015; 1.1 at 0.003),
      the largest before more recall costs false flags without finding more drops (`bench/drift_sim.py --sweep`).
    - `provisional_p`: a drop shown by the newest run alone (its passes against the pooled runs before it) with p at
      most this is flagged that same night as *provisional*; the next run confirms it (the full test above finds the
      drop) or withdraws it. Far below `max_p`, so only a drop that one run settles (35/35 -> 0/5: p = 1.5e-6; 15/15 ->
      0/5: 6.4e-5) is flagged before a second run; chosen on the bench's tuning seeds (`bench/drift_sim.py --sweep`).
    - `persistence`: log-likelihood units by which a lasting change must explain the runs after the change point better
      than one outlier night does (`evalcore.drift.stats.step_over_outlier`).
    - `plausible`: log-likelihood units below the best change point within which a change point is plausible
      (where a fingerprint changed within them, the change is placed there).
    - `alike_attempts`: estimate how alike each model answers a night's attempts and test the counts that leaves
      (`evalcore.drift.stats.night_correlation`); off, every attempt counts as independent.
    """

    min_baseline: int = 2
    min_after: int = 2
    window: int = 28
    fdr: float = 0.05
    max_p: float = 0.0015
    provisional_p: float = 1e-4
    persistence: float = 1.0
    plausible: float = 5.0
    alike_attempts: bool = True

    def __post_init__(self) -> None:
        if self.min_baseline < 1 or self.min_after < 1 or self.window < self.min_baseline + self.min_after:
            raise ValueError(f"need min_baseline >= 1, min_after >= 1 and window >= min_baseline + min_after, got {self}")
        if not 0 < self.fdr < 1 or not 0 < self.max_p <= 1 or not 0 <= self.provisional_p <= 1 or self.persistence < 0 or self.plausible < 0:
            raise ValueError(f"need 0 < fdr < 1, 0 < max_p <= 1, 0 <= provisional_p <= 1, persistence >= 0 and plausible >= 0, got {self}")


@dataclass(frozen=True)
class Change:
    """A persistent change of one (model, case)'s pass rate at a change point, the test that found it, and its likely cause.

    The change point lies between `last_good_run_id` (the last run before it)
    and `change_run_id` (the first run after it). `detected_run_id` is the run
    that first flagged it, `delay_runs` runs after it (1 = on the first run
    after), and `detected_date` its night: the one date the change has in the
    flagging run's own report, in `evalcore drift` and on the Drift page, from
    the night it is flagged on. `confirmed_run_id` is the run whose full test
    found it (the same run, unless a provisional flag came first).
    `before_*` / `after_*` are the pooled counts the full test compared (the
    provisional test's while the flag is provisional); `since_*` are the
    counts from the change point to the newest run (or to the run that fixed
    it). A drop stays `open` until a recovery closes it (`closed_by_run_id`:
    the first run of the recovered regime).

    A `provisional` drop was found by the newest run alone (one run after the
    change point, `provisional_p`); its `q_value` is then Bonferroni's bound
    over the night's tests, and it has no `confirmed_run_id` yet. The next run
    of the case confirms it (it becomes the drop the full test found, still
    dated the night it was flagged, with `provisional_run_id` naming that
    night's run and `confirmed_run_id` the next) or withdraws it (status
    `withdrawn`). `confirmation` reads provisional -> confirmed (or withdrawn).
    """

    kind: ChangeKind
    model: str
    case_id: str
    baseline_run_id: str  # the first run the test pooled before the change point
    last_good_run_id: str
    last_good_date: date
    change_run_id: str
    change_date: date
    detected_run_id: str
    detected_date: date
    delay_runs: int
    before_passes: int
    before_attempts: int
    after_passes: int
    after_attempts: int
    p_value: float  # the exact scan p-value over every candidate change point of the night's test
    q_value: float  # Benjamini-Hochberg over the night's (model × case) tests
    tests: int  # how many (model × case) tests that night's correction covered
    cause: Cause
    changed: tuple[Component, ...]
    attribution: str
    evidence: str
    description_diff: str
    action: str
    since_passes: int
    since_attempts: int
    simulated: bool = False
    status: Status | None = None  # drops only
    closed_by_run_id: str | None = None
    closed_date: date | None = None
    provisional: bool = False
    provisional_run_id: str | None = None  # the run that flagged this drop provisionally, a night before it was confirmed
    confirmed_run_id: str | None = None  # the run whose full test found it (None while provisional, or withdrawn)
    confirmed_date: date | None = None
    night_correlation: float = 0.0  # how alike the model answered a night's attempts; above 0 the test counted fewer attempts

    @property
    def confirmation(self) -> Confirmation:
        """provisional (one run shows it), then confirmed (the full test found it) or withdrawn (the next run did not)."""
        if self.status == "withdrawn":
            return "withdrawn"
        return "provisional" if self.provisional else "confirmed"

    def reported_by(self, run_id: str) -> bool:
        """Whether this is a change the run reports as its own: the run that flagged it, or the run that confirmed it."""
        return run_id in (self.detected_run_id, self.confirmed_run_id)

    @property
    def before_rate(self) -> float:
        return self.before_passes / self.before_attempts

    @property
    def after_rate(self) -> float:
        return self.after_passes / self.after_attempts

    @property
    def before_interval(self) -> tuple[float, float]:
        """Wilson 95% interval of the pass rate before the change point."""
        interval = wilson_interval(self.before_passes, self.before_attempts)
        assert interval is not None  # a test always has attempts on both sides
        return interval

    @property
    def after_interval(self) -> tuple[float, float]:
        interval = wilson_interval(self.after_passes, self.after_attempts)
        assert interval is not None
        return interval

    @property
    def since_rate(self) -> float:
        return self.since_passes / self.since_attempts if self.since_attempts else 0.0
