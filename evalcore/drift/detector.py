"""Pure logic: change-point detection over each (model, case)'s sequence of runs, night by night, with FDR control (Layer 1).

The runs are replayed in order, as the nights they were. A run that is not
complete (it stopped, or an attempt errored) and a (model, case) with no
scored attempt are gaps: never a baseline, never evidence. On each night,
every (model, case) with a run that night is one test:

1. **Segment.** Its runs of the current regime (from its last change point
   on, at most `window` runs back, the newest included).
2. **Scan.** Every candidate change point k with at least `min_baseline`
   runs before it and `min_after` runs from it to the newest is tested: the
   pooled counts before against the pooled counts after, one-sided Fisher
   exact test, and the smallest p is corrected exactly for the number of
   splits looked at (`evalcore.drift.stats.scan_test`). While the case has an
   open drop, the test looks for a rise as well (a recovery), with one run
   of the dropped regime enough before a candidate; both are in the night's
   count.
3. **FDR.** The night's p-values get Benjamini-Hochberg q-values; a test with
   q <= `fdr` is significant. Tests that could not reach `fdr` whatever
   their data (a case that never failed cannot show a drop) are left out of
   the count (`stats.discrete_bh`). The p-value itself must also be at most
   `max_p`: a case is tested again every night, and BH over one night does
   not see those repeated looks at one history.
4. **Persistence.** A significant change must explain the runs after the
   best split better than one outlier night does (`stats.step_over_outlier`
   above `persistence`), so one bad night among good ones is never a change,
   whatever its size.
5. **Alike attempts.** A model that answers a night's attempts alike
   (temperature 0) shows fewer mixed runs than independent attempts would;
   from the segments of its cases that night the detector estimates how
   alike (`stats.night_correlation`) and, when the deficit is significant,
   tests counts divided by the design effect (`stats.effective_counts`,
   Rao and Scott 1992), so a case it fails whole nights at a time is not
   read as a drop.
6. **Location and cause.** The change point is the one that maximises the
   two-rate binomial log-likelihood; where a fingerprint changed at a change
   point within `plausible` log-likelihood units of it, the change is placed
   there (a first degraded run that happened to pass 5/5 does not move the
   change point past the server change that caused it). The cause compares
   every fingerprint of the last run before the change point with the first
   run after it (`evalcore.drift.attribution`).
7. **Provisional.** A case with no flag that night, open or pending, whose
   newest run alone shows a drop against the pooled runs of its regime before
   it (at least `min_baseline` of them) with p <= `provisional_p` and
   Bonferroni's bound over the night's tests at most `fdr`, is flagged that
   night as provisional. Its next run settles it: the full test above finds
   the drop (the flag is confirmed, and becomes that drop, still dated the
   night it was flagged) or it does not (the flag is withdrawn, and the
   regime goes on).

A drop opens a flag and starts a new regime at its change point; a later
recovery (a significant rise) closes every open flag of the case, naming the
run that fixed it, and starts a regime again. While a flag is open a further
drop is looked for too (against the runs since the first drop's change point),
and opens a flag of its own.

The defaults (`DriftSettings`) are those `bench/drift_sim.py` measured against
the targets on simulated nightly histories.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from evalcore.drift.attribution import Attribution, action_sentence, attribute, changed_components
from evalcore.drift.stats import (
    Counts,
    Direction,
    discrete_bh,
    effective_counts,
    night_correlation,
    pooled,
    scan_test,
    split_log_likelihood,
    split_p_value,
    step_over_outlier,
)
from evalcore.drift.types import Change, ChangeKind, DriftSettings, RunPoint

Pair = tuple[str, str]  # (model, case_id)


@dataclass
class _PairState:
    history: list[RunPoint]
    regime_start: int = 0
    open_drops: list[int] = field(default_factory=list)  # indices into the changes found so far
    pending: int | None = None  # index of a provisional drop its next run settles


@dataclass(frozen=True)
class _Found:
    change: Change
    attribution: Attribution
    first_after: int  # index in the case's history of the first run after the change point


@dataclass(frozen=True)
class _Test:
    pair: Pair
    newest: int  # index of the night's run in the pair's history
    start: int  # index of the segment's first run
    direction: Direction
    segment: tuple[Counts, ...]
    p_value: float
    attainable: float  # a lower bound of the smallest p-value this test could give at all
    split: int  # segment index of the best split's first run after
    min_after: int  # runs a candidate change point needs after it (1 for a provisional test)
    correlation: float = 0.0  # how alike the model answers a night's attempts; `segment` holds the counts it leaves


def group_histories(points: Iterable[RunPoint]) -> dict[Pair, list[RunPoint]]:
    """Points grouped per (model, case), each list in the order given (chronological from the store)."""
    histories: dict[Pair, list[RunPoint]] = {}
    for point in points:
        histories.setdefault((point.model, point.case_id), []).append(point)
    return histories


def detect_changes(points: Iterable[RunPoint], settings: DriftSettings | None = None, *, withdrawn: bool = False) -> list[Change]:
    """Every drop and recovery of every (model, case), in the order they were first flagged; see the module docstring.

    Withdrawn provisional drops are left out, unless `withdrawn` asks for them (status "withdrawn").
    """
    settings = settings or DriftSettings()
    ordered = [p for p in points if p.complete and p.attempts > 0]  # the gaps (module docstring)
    states = {pair: _PairState(history) for pair, history in group_histories(ordered).items()}
    nights: dict[str, list[tuple[Pair, int]]] = {}
    for pair, state in states.items():
        for index, point in enumerate(state.history):
            nights.setdefault(point.run_id, []).append((pair, index))
    found: list[_Found] = []
    for run_id in dict.fromkeys(p.run_id for p in ordered):
        correlation = _correlations(states, nights[run_id], settings)
        tests = [test for pair, index in nights[run_id] for test in _night_tests(states[pair], pair, index, settings, correlation[pair[0]])]
        # A test that cannot reach max_p whatever its data can never flag, so it leaves the count as well.
        attainable = [t.attainable if t.attainable <= settings.max_p else 1.0 for t in tests]
        q_values, family = discrete_bh([t.p_value for t in tests], attainable, settings.fdr)
        flagged: set[Pair] = set()
        for test, q_value in zip(tests, q_values, strict=True):
            if test.pair in flagged or q_value > settings.fdr or test.p_value > settings.max_p or not _persistent(test, settings.persistence):
                continue
            state = states[test.pair]
            entry = _change(state, test, q_value, family, settings)
            flagged.add(test.pair)
            if entry.change.kind == "drop" and state.pending is not None:  # the provisional flag is confirmed: it becomes this drop
                found[state.pending] = _confirmed(found[state.pending].change, entry, test.newest - 1)
                state.open_drops.append(state.pending)
                state.pending = None
            elif entry.change.kind == "drop":
                state.open_drops.append(len(found))
                found.append(entry)
            else:
                for index in state.open_drops:
                    closed = replace(found[index].change, status="recovered", closed_by_run_id=entry.change.change_run_id, closed_date=entry.change.change_date)
                    found[index] = replace(found[index], change=closed)
                state.open_drops = []
                found.append(entry)
            state.regime_start = entry.first_after
        for pair, index in nights[run_id]:
            state = states[pair]
            if pair in flagged:
                continue
            if state.pending is not None:  # its next run did not confirm it
                found[state.pending] = replace(found[state.pending], change=replace(found[state.pending].change, status="withdrawn"))
                state.pending = None
            provisional = _provisional_test(state, pair, index, settings, correlation[pair[0]])
            if provisional is not None and provisional.p_value * max(len(tests), 1) <= settings.fdr:
                entry = _change(state, provisional, min(1.0, provisional.p_value * max(len(tests), 1)), max(len(tests), 1), settings)
                state.pending = len(found)
                found.append(replace(entry, change=replace(entry.change, provisional=True, confirmed_run_id=None, confirmed_date=None)))
    kept = [entry for entry in found if withdrawn or entry.change.status != "withdrawn"]
    return _with_since(kept, states)


def _confirmed(flag: Change, entry: _Found, flagged_at: int) -> _Found:
    """The drop the full test found, confirming a provisional flag: still dated the night the flag was raised (its run,
    `flagged_at` in the case's history), so every report gives it one date, and confirmed by the night's run."""
    change = entry.change
    return replace(
        entry,
        change=replace(
            change,
            detected_run_id=flag.detected_run_id,
            detected_date=flag.detected_date,
            delay_runs=max(1, flagged_at - entry.first_after + 1),
            provisional_run_id=flag.detected_run_id,
            confirmed_run_id=change.detected_run_id,
            confirmed_date=change.detected_date,
        ),
    )


def _segment(state: _PairState, newest: int, settings: DriftSettings, correlation: float = 0.0) -> tuple[int, tuple[Counts, ...]]:
    """The index of the first run of the case's current segment, and its runs' counts (those a correlation leaves)."""
    start = max(state.regime_start, newest - settings.window + 1)
    return start, tuple(effective_counts(Counts(p.passes, p.attempts), correlation) for p in state.history[start : newest + 1])


def _correlations(states: dict[Pair, _PairState], tonight: Sequence[tuple[Pair, int]], settings: DriftSettings) -> dict[str, float]:
    """Per model, how alike it answers a night's attempts (`stats.night_correlation`), from the segments of its cases tested tonight."""
    segments: dict[str, list[tuple[Counts, ...]]] = {}
    for pair, index in tonight:
        segments.setdefault(pair[0], []).append(_segment(states[pair], index, settings)[1])
    return {model: night_correlation(found) if settings.alike_attempts else 0.0 for model, found in segments.items()}


def _night_tests(state: _PairState, pair: Pair, newest: int, settings: DriftSettings, correlation: float = 0.0) -> list[_Test]:
    """The night's test of a case: a drop; while a drop is open, a recovery and a further drop (module docstring, step 2)."""
    start, segment = _segment(state, newest, settings, correlation)
    directions: tuple[Direction, ...] = ("rise", "drop") if state.open_drops else ("drop",)
    tests = []
    for direction in directions:
        min_before = settings.min_baseline if direction == "drop" else 1
        splits = range(min_before, len(segment) - settings.min_after + 1)
        result = scan_test(segment, splits, direction, screen=min(settings.fdr, settings.max_p))
        if result is not None:
            tests.append(_Test(pair, newest, start, direction, segment, result.p_value, result.attainable, result.split, settings.min_after, correlation))
    return tests


def _provisional_test(state: _PairState, pair: Pair, newest: int, settings: DriftSettings, correlation: float = 0.0) -> _Test | None:
    """The newest run alone against the pooled runs of its regime before it (module docstring, step 6); None unless p <= provisional_p."""
    if state.open_drops:
        return None
    start, segment = _segment(state, newest, settings, correlation)
    if len(segment) - 1 < settings.min_baseline:
        return None
    p_value = split_p_value(pooled(segment[:-1]), segment[-1])
    if p_value > settings.provisional_p:
        return None
    return _Test(pair, newest, start, "drop", segment, p_value, p_value, len(segment) - 1, 1, correlation)


def _persistent(test: _Test, margin: float) -> bool:
    """A lasting change explains the runs after the best split better than one outlier night (module docstring, step 4)."""
    return step_over_outlier(test.segment[: test.split], test.segment[test.split :]) > margin


def _change(state: _PairState, test: _Test, q_value: float, tests: int, settings: DriftSettings) -> _Found:
    split = _locate(state.history, test, settings)
    last_good, first_after = state.history[test.start + split - 1], state.history[test.start + split]
    kind: ChangeKind = "drop" if test.direction == "drop" else "recovery"
    attribution = attribute(
        kind,
        last_good.fingerprints,
        first_after.fingerprints,
        last_good=(last_good.run_id, last_good.run_date),
        first_after=(first_after.run_id, first_after.run_date),
    )
    observed = [Counts(p.passes, p.attempts) for p in state.history[test.start : test.newest + 1]]  # as run, whatever the correlation
    before, after = pooled(observed[:split]), pooled(observed[split:])
    newest = state.history[test.newest]
    change = Change(
        kind=kind,
        model=newest.model,
        case_id=newest.case_id,
        baseline_run_id=state.history[test.start].run_id,
        last_good_run_id=last_good.run_id,
        last_good_date=last_good.run_date,
        change_run_id=first_after.run_id,
        change_date=first_after.run_date,
        detected_run_id=newest.run_id,
        detected_date=newest.run_date,
        delay_runs=test.newest - (test.start + split) + 1,
        before_passes=before.passes,
        before_attempts=before.attempts,
        after_passes=after.passes,
        after_attempts=after.attempts,
        p_value=test.p_value,
        q_value=q_value,
        tests=tests,
        cause=attribution.cause,
        changed=attribution.changed,
        attribution=attribution.label,
        evidence=attribution.evidence + _other_candidates(state.history, test, split, settings),
        description_diff=attribution.description_diff,
        action="",  # written once the counts since the change point are known (`_with_since`)
        since_passes=after.passes,
        since_attempts=after.attempts,
        simulated=newest.simulated,
        status="open" if kind == "drop" else None,
        confirmed_run_id=newest.run_id,
        confirmed_date=newest.run_date,
        night_correlation=test.correlation,
    )
    return _Found(change, attribution, test.start + split)


def _locate(history: Sequence[RunPoint], test: _Test, settings: DriftSettings) -> int:
    """The segment index of the first run after the change point (step 5 of the module docstring)."""
    likelihood = _plausible_splits(test, settings)
    best = max(likelihood, key=lambda k: likelihood[k])
    changed = [k for k in likelihood if changed_components(history[test.start + k - 1].fingerprints, history[test.start + k].fingerprints)]
    return max(changed, key=lambda k: likelihood[k]) if changed else best


def _plausible_splits(test: _Test, settings: DriftSettings) -> dict[int, float]:
    """Splits in the test's direction (at least one run before, `min_after` after) within `plausible` of the best, with ℓ(k)."""
    likelihood: dict[int, float] = {}
    for k in range(1, len(test.segment) - test.min_after + 1):
        before, after = pooled(test.segment[:k]), pooled(test.segment[k:])
        if before.rate is None or after.rate is None or (after.rate < before.rate) != (test.direction == "drop") or after.rate == before.rate:
            continue
        likelihood[k] = split_log_likelihood(test.segment, k)
    if not likelihood:
        return {test.split: 0.0}
    top = max(likelihood.values())
    return {k: value for k, value in likelihood.items() if top - value <= settings.plausible}


def _other_candidates(history: Sequence[RunPoint], test: _Test, split: int, settings: DriftSettings) -> str:
    """Fingerprint changes at other plausible change points, so a close call between two causes is visible."""
    lines = []
    for k in sorted(_plausible_splits(test, settings)):
        if k == split:
            continue
        before, after = history[test.start + k - 1], history[test.start + k]
        changed = changed_components(before.fingerprints, after.fingerprints)
        if changed:
            lines.append(f"also plausible: a change point before run {after.run_id} ({after.run_date}), where the {' and '.join(changed)} fingerprint changed")
    return "".join(f"\n{line}" for line in lines)


def _with_since(found: list[_Found], states: dict[Pair, _PairState]) -> list[Change]:
    """Each change with its counts from the change point to the next change of its case (or the newest run), and its sentence."""
    result = []
    for index, entry in enumerate(found):
        change = entry.change
        history = states[(change.model, change.case_id)].history
        later = [
            e.first_after for e in found[index + 1 :] if (e.change.model, e.change.case_id) == (change.model, change.case_id) and e.change.status != "withdrawn"
        ]
        since = pooled([Counts(p.passes, p.attempts) for p in history[entry.first_after : later[0] if later else len(history)]])
        action = action_sentence(
            change.kind,
            entry.attribution,
            model=change.model,
            case_id=change.case_id,
            change_date=change.change_date,
            rates=(change.before_rate, since.rate or 0.0),
            before=history[entry.first_after - 1].fingerprints,
            after=history[entry.first_after].fingerprints,
        )
        result.append(replace(change, since_passes=since.passes, since_attempts=since.attempts, action=action))
    return result
