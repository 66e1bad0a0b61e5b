"""Drift detection (evalcore.drift): the exact tests, the change-point detector on histories with known changes and known noise,
attribution against the last good run, recoveries, and the command over a real store."""

from __future__ import annotations

import argparse
import json
import math
import random
from dataclasses import replace
from datetime import date, timedelta
from fractions import Fraction
from pathlib import Path

import pytest

from evalcore.commands.drift import command as run_drift_command
from evalcore.drift import DriftSettings, Fingerprints, RunPoint, description_diff, detect_changes
from evalcore.drift.stats import Counts, benjamini_hochberg, discrete_bh, scan_test, split_p_value, step_over_outlier
from tests.builders import finish_recorded_run

START = date(2026, 10, 1)
TOOLS_V1 = json.dumps([{"name": "search_kb", "description": "Search internal help-desk articles by keyword."}])
TOOLS_V2 = json.dumps([{"name": "search_kb", "description": "Look things up."}])
BASE = Fingerprints("fp-1", "v1", "case-1", (("seed", "7"), ("system_prompt", "Be brief."), ("temperature", "0.0")), "0.1.0", TOOLS_V1)


def history(passes: list[int], *, changes: dict[int, dict[str, object]] | None = None, case: str = "case", model: str = "sim/m") -> list[RunPoint]:
    """A (model, case) history of 5-attempt runs; `changes[i]` replaces fingerprint fields from run i on."""
    fingerprints = BASE
    points = []
    for index, count in enumerate(passes):
        if changes and index in changes:
            fingerprints = replace(fingerprints, **changes[index])  # type: ignore[arg-type]
        points.append(RunPoint(model, case, f"run-{index:02d}", START + timedelta(days=index), count, 5, fingerprints))
    return points


def drops(points: list[RunPoint], settings: DriftSettings | None = None):
    return [c for c in detect_changes(points, settings) if c.kind == "drop"]


def drops_with_withdrawn(points: list[RunPoint]):
    return [c for c in detect_changes(points, withdrawn=True) if c.kind == "drop"]


def test_fisher_split_test_matches_the_hypergeometric_tail_by_hand():
    # 35/35 before, 1/5 after: N=40, K=36, n=5; only x=1 is possible: C(36,1)·C(4,4)/C(40,5)
    assert split_p_value(Counts(35, 35), Counts(1, 5)) == pytest.approx(36 / math.comb(40, 5))
    # 28/35 before, 1/5 after: (C(29,0)·C(11,5) + C(29,1)·C(11,4)) / C(40,5)
    assert split_p_value(Counts(28, 35), Counts(1, 5)) == pytest.approx((462 + 29 * 330) / math.comb(40, 5))
    assert split_p_value(Counts(10, 10), Counts(5, 5)) == 1.0
    assert split_p_value(Counts(0, 10), Counts(5, 5), "rise") == pytest.approx(1 / math.comb(15, 5))
    with pytest.raises(ValueError):
        Counts(6, 5)


def test_the_scan_p_value_is_the_exact_permutation_probability():
    """Enumerate every arrangement of the passes over a small segment: the scan p-value is the share with min p_k <= observed."""
    import itertools

    runs = [Counts(2, 2), Counts(2, 2), Counts(1, 2), Counts(2, 2), Counts(0, 2)]
    splits = [1, 2, 3, 4]
    result = scan_test(runs, splits)
    assert result is not None and result.exact and result.split == 4
    attempts = 10
    observed = min(split_p_value(_pool(runs[:k]), _pool(runs[k:])) for k in splits)
    hits = total = 0
    for passed in itertools.combinations(range(attempts), 7):
        outcome = [int(i in passed) for i in range(attempts)]
        arranged = [Counts(sum(outcome[2 * r : 2 * r + 2]), 2) for r in range(5)]
        total += 1
        hits += min(split_p_value(_pool(arranged[:k]), _pool(arranged[k:])) for k in splits) <= observed + 1e-12
    assert result.p_value == pytest.approx(hits / total)
    assert result.p_value > result.min_split_p  # the correction for looking at four change points
    assert scan_test(runs, []) is None
    with pytest.raises(ValueError):
        scan_test(runs, [0])


def test_a_case_that_never_failed_cannot_reach_significance_and_leaves_the_count():
    result = scan_test([Counts(5, 5)] * 6, range(2, 5))
    assert result is not None and result.attainable == 1.0
    q_values, family = discrete_bh([0.001, 1.0, 1.0], [0.0001, 1.0, 1.0], 0.02)
    assert family == 1 and q_values == [0.001, 1.0, 1.0]  # plain BH over 3 tests would give 0.003


def test_benjamini_hochberg_by_hand():
    # sorted p: 0.01, 0.03, 0.04, 0.5 -> m·p/rank: 0.04, 0.06, 0.0533, 0.5 -> running minimum from the top
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, Fraction(16, 300), Fraction(16, 300), 0.5])


def test_a_step_beats_one_outlier_night_and_not_the_other_way_round():
    before = [Counts(5, 5)] * 10
    assert step_over_outlier(before, [Counts(3, 5), Counts(3, 5)]) > 0
    assert step_over_outlier(before, [Counts(0, 5), Counts(5, 5)]) < 0
    assert step_over_outlier(before, [Counts(0, 5), Counts(5, 5), Counts(5, 5)]) < 0


def test_a_persistent_drop_from_five_of_five_to_three_is_found_after_two_or_three_runs():
    # p <= max_p = 0.0015 takes 5 runs of history to find 3/5, 3/5, 3/5, and 7 to find 3/5, 3/5 (docs/drift.md)
    assert drops(history([5] * 4 + [3, 3, 3])) == []
    assert [f.delay_runs for f in drops(history([5] * 6 + [3, 3]))] == []
    for length, delay in ((5, 3), (7, 2), (18, 2)):
        found = drops(history([5] * length + [3, 3, 3], changes={length: {"model_version": "v2"}}))
        assert [(f.change_run_id, f.delay_runs) for f in found] == [(f"run-{length:02d}", delay)]
        flag = found[0]
        assert flag.cause == "model" and flag.attribution == "model update" and flag.status == "open"
        assert (flag.before_passes, flag.before_attempts, flag.after_passes, flag.after_attempts) == (5 * length, 5 * length, 3 * delay, 5 * delay)
        assert flag.p_value <= flag.q_value <= DriftSettings().fdr
        low, high = flag.after_interval
        assert low < 0.6 < high and flag.before_interval[1] == pytest.approx(1.0)


def test_one_bad_night_among_good_ones_is_never_a_change():
    for bad in (0, 1, 2, 3):
        assert drops(history([5] * 10 + [bad] + [5] * 10)) == []
    (flag,) = drops(history([5] * 10 + [0]))  # the newest night alone: a provisional flag, withdrawn by the next good run
    assert flag.provisional and flag.status == "open" and (flag.confirmation, flag.confirmed_run_id) == ("provisional", None)
    (withdrawn,) = drops_with_withdrawn(history([5] * 10 + [0, 5]))
    assert withdrawn.provisional and withdrawn.status == "withdrawn" and withdrawn.detected_run_id == "run-10"
    assert (withdrawn.confirmation, withdrawn.confirmed_run_id) == ("withdrawn", None)


def test_a_drop_one_run_settles_is_flagged_provisionally_that_night_and_confirmed_by_the_next():
    (flag,) = drops(history([5] * 7 + [0], changes={7: {"model_version": "v2"}}))
    assert (flag.provisional, flag.status, flag.detected_run_id, flag.change_run_id, flag.delay_runs) == (True, "open", "run-07", "run-07", 1)
    assert (flag.before_passes, flag.before_attempts, flag.after_passes, flag.after_attempts) == (35, 35, 0, 5)
    assert flag.p_value == pytest.approx(1 / math.comb(40, 5)) and flag.cause == "model" and flag.tests == 1
    (confirmed,) = drops(history([5] * 7 + [0, 1], changes={7: {"model_version": "v2"}}))
    assert (confirmed.provisional, confirmed.confirmation, confirmed.provisional_run_id, confirmed.change_run_id) == (False, "confirmed", "run-07", "run-07")
    # still dated the night it was flagged, one run in; the next night's run confirmed it, with the full test's counts
    assert (confirmed.detected_run_id, confirmed.detected_date, confirmed.delay_runs) == ("run-07", START + timedelta(days=7), 1)
    assert (confirmed.confirmed_run_id, confirmed.confirmed_date) == ("run-08", START + timedelta(days=8))
    assert (confirmed.after_passes, confirmed.after_attempts) == (1, 10) and confirmed.reported_by("run-07") and confirmed.reported_by("run-08")
    # A drop that one run does not settle waits for the second: 2/5 after 35/35, or 0/5 after only 10/10.
    assert drops(history([5] * 7 + [2])) == [] and drops(history([5] * 2 + [0])) == []
    # An open drop is not flagged again by a worse night.
    assert [f.change_run_id for f in drops(history([5] * 7 + [2, 2, 2, 0]))] == ["run-07"]


def test_a_night_whose_attempts_all_errored_is_a_gap_not_a_zero():
    """A run with no scored attempt for the case (attempts 0) and an incomplete run are not runs of its history at all."""
    assert drops(history([5, 5, 0, 0])) != []  # two baseline runs: the drop is found
    errored = history([5, 5, 0, 0])
    with_gap = [errored[0], replace(errored[1], passes=0, attempts=0, complete=False), *errored[2:]]
    assert drops(with_gap) == []  # one baseline run only: min_baseline 2 is not met
    incomplete = [errored[0], replace(errored[1], passes=4, attempts=4, complete=False), *errored[2:]]
    assert drops(incomplete) == []


def test_noise_at_a_steady_rate_is_not_flagged():
    rng = random.Random(1234)
    flags = 0
    for rate in (0.95, 0.9, 0.8, 0.6):
        for _ in range(50):
            flags += len(drops(history([sum(rng.random() < rate for _ in range(5)) for _ in range(21)])))
    assert flags <= 4  # of 200 one-case histories of 21 nights (3 today); bench/drift_sim.py measures the rate on whole stores


def test_a_model_that_answers_a_nights_attempts_alike_counts_fewer_attempts():
    """A temperature-0 model: every night 5/5 or 0/5. Its flaky case fails whole nights; read as 5 independent attempts
    that looks like a drop (35/35 then 0/5, 0/5), and its other cases show that its attempts are alike."""
    rng = random.Random(11)
    flaky = history([5] * 7 + [0, 0], case="flaky")
    others = [history([5 * (rng.random() < rate) for _ in range(9)], case=f"other-{i}") for i, rate in enumerate((0.5, 0.6, 0.7, 0.5, 0.6, 0.4))]
    points = sorted([*flaky, *(p for h in others for p in h)], key=lambda p: p.run_id)
    assert "flaky" in {f.case_id for f in drops(points, DriftSettings(alike_attempts=False))}  # (and some of the others)
    assert drops(points) == []
    # The same model with independent attempts (mixed runs on its other cases): the drop is found.
    mixed = [history([sum(rng.random() < rate for _ in range(5)) for _ in range(9)], case=f"other-{i}") for i, rate in enumerate((0.5, 0.6, 0.7))]
    points = sorted([*flaky, *(p for h in mixed for p in h)], key=lambda p: p.run_id)
    (flag,) = drops(points)
    assert flag.case_id == "flaky" and flag.night_correlation == 0.0


def test_attribution_compares_the_last_good_run_with_the_first_after_the_change():
    passes = [5] * 8 + [5, 3, 2, 3]  # the first degraded run passed 5/5 by chance: the change point is still the server change
    (flag,) = drops(history(passes, changes={8: {"server": "fp-2", "server_tools_json": TOOLS_V2}}))
    assert flag.change_run_id == "run-08" and flag.last_good_run_id == "run-07" and flag.cause == "server"
    assert "changed description of search_kb:" in flag.evidence and "+Look things up." in flag.description_diff
    assert flag.action.startswith("tools/list changed the search_kb description on 2026-10-09; pass rate 100% → ")
    assert flag.action.endswith("since: review or revert that change (diff below).")


@pytest.mark.parametrize(
    ("fields", "cause", "label"),
    [
        ({"model_version": "v2"}, "model", "model update"),
        ({"case_hash": "case-2"}, "case", "golden case edited"),
        ({"case_hash": "case-2", "settings": (("seed", "7"), ("system_prompt", "Be terse."), ("temperature", "0.0"))}, "case", "golden case edited"),
        ({"settings": (("seed", "7"), ("system_prompt", "Be brief."), ("temperature", "0.7"))}, "settings", "system prompt or sampling changed"),
        ({"evalcore_version": "0.2.0"}, "evalcore", "evalcore version changed"),
        ({"server": "fp-2", "server_tools_json": TOOLS_V2, "model_version": "v2"}, "ambiguous", "ambiguous: server and model changed"),
        ({}, "silent", "silent model update suspected"),
    ],
)
def test_every_fingerprint_names_its_cause(fields, cause, label):
    (flag,) = drops(history([5] * 8 + [2, 2, 2], changes={8: fields}))
    assert (flag.cause, flag.attribution) == (cause, label)
    if cause == "silent":
        assert "model version: unchanged (v1)" in flag.evidence and "server fingerprint: unchanged" in flag.evidence
        assert flag.action.startswith("Nothing evalcore fingerprints changed on 2026-10-09")
    if cause == "settings":
        assert "temperature 0.0 -> 0.7" in flag.evidence


def test_an_unreported_model_version_is_not_a_model_update():
    (flag,) = drops(history([5] * 8 + [2, 2, 2], changes={8: {"model_version": None}}))
    assert flag.cause == "silent" and "v1 -> not reported" in flag.evidence


def test_a_recovery_closes_the_flag_with_the_run_that_fixed_it():
    passes = [5] * 8 + [2] * 5 + [5] * 6
    server_v2, server_v1 = {"server": "fp-2", "server_tools_json": TOOLS_V2}, {"server": "fp-1", "server_tools_json": TOOLS_V1}
    changes = detect_changes(history(passes, changes={8: server_v2, 13: server_v1}))
    drop, recovery = changes
    assert (drop.kind, drop.status, drop.closed_by_run_id, drop.since_passes, drop.since_attempts) == ("drop", "recovered", "run-13", 10, 25)
    assert (recovery.kind, recovery.change_run_id, recovery.cause) == ("recovery", "run-13", "server")
    assert recovery.action.startswith("case recovered on 2026-10-14; pass rate 40% → 100% since")


def test_a_second_drop_while_the_first_flag_is_open_opens_its_own_flag():
    passes = [5] * 8 + [3] * 6 + [0] * 3
    changes = detect_changes(history(passes, changes={8: {"model_version": "v2"}, 14: {"server": "fp-2", "server_tools_json": TOOLS_V2}}))
    assert [(c.kind, c.change_run_id, c.cause, c.status) for c in changes] == [("drop", "run-08", "model", "open"), ("drop", "run-14", "server", "open")]
    assert changes[1].before_passes == 18 and changes[1].before_attempts == 30  # against the runs since the first change point


def test_the_minimum_baseline_is_configurable():
    passes = [5, 5, 0, 0, 0]
    assert [(f.change_run_id, f.delay_runs) for f in drops(history(passes), DriftSettings(min_baseline=2))] == [("run-02", 2)]
    assert drops(history(passes), DriftSettings(min_baseline=4)) == []  # no change point with 4 runs before and 2 after yet
    with pytest.raises(ValueError):
        DriftSettings(min_baseline=0)


def test_the_correction_covers_every_case_tested_that_night():
    """The same drop, alone, and among 30 other cases with failures that night: its q-value grows with the family."""
    alone = drops(history([5] * 10 + [2, 2]))
    noisy = history([5] * 10 + [2, 2])
    rng = random.Random(7)
    for index in range(30):
        noisy += history([sum(rng.random() < 0.8 for _ in range(5)) for _ in range(12)], case=f"other-{index}")
    crowded = [f for f in drops(sorted(noisy, key=lambda p: p.run_id)) if f.case_id == "case"]
    assert alone and alone[0].tests == 1
    assert crowded and crowded[0].tests > 1 and crowded[0].q_value > alone[0].q_value and crowded[0].p_value == alone[0].p_value


def test_description_diff_lists_added_removed_and_changed_tools():
    old = [{"name": "a", "description": "Find things."}, {"name": "b", "description": "Old tool."}]
    new = [{"name": "a", "description": "Look things up."}, {"name": "c", "description": "New tool."}]
    diff = description_diff(old, new)
    assert diff.splitlines() == ["added tool c", "removed tool b", "changed description of a:", "  @@ -1 +1 @@", "  -Find things.", "  +Look things up."]
    assert description_diff(old, old) == ""


def test_drift_command_on_an_empty_store(tmp_path, capsys):
    args = argparse.Namespace(db=tmp_path / "none.duckdb", golden=None, json=None, min_baseline=None)
    assert run_drift_command(args) == 0
    assert "no complete behaviour runs" in capsys.readouterr().out


def _pool(runs):
    return Counts(sum(r.passes for r in runs), sum(r.attempts for r in runs))


def _store_history(
    db, passes_per_run: list[int], *, last_status: str = "complete", new_version_from: int | None = None, errored: dict[int, int] | None = None
) -> None:
    """A store with one model x case per run, written through the store's own functions; `errored[i]`: run i's first attempts errored."""
    from evalcore.records import AttemptRecord, AttemptScore, Score
    from evalcore.store import behaviour as store

    for index, passes in enumerate(passes_per_run):
        run_id = f"run-{index:02d}"
        store.create_run(
            db,
            run_id=run_id,
            run_date=START + timedelta(days=index),
            golden_path="golden/tasks.yaml",
            golden_hash="g",
            server_target="http://127.0.0.1:1/mcp",
            server_name=None,
            server_fingerprint="fp-1",
            server_tools=[{"name": "get_weather", "description": "Weather."}],
            models=["sim/m"],
            runs=5,
            config={"models": [{"name": "sim/m", "temperature": 0.0, "seed": 7}], "max_steps": 8, "judge": None},
        )
        records = [
            AttemptRecord(
                model="sim/m",
                case_id="weather-paris",
                attempt=attempt,
                case_hash="case-1",
                case_kind="hard",
                simulated=True,
                model_version="v2" if new_version_from is not None and index >= new_version_from else "v1",
                score=AttemptScore((Score("selection", 1.0, True), Score("arguments", 1.0, True)), attempt <= passes),
                tool_calls=(),
                final_text=None,
                stop_reason="model_error" if attempt <= (errored or {}).get(index, 0) else "final",
                error="provider returned 503" if attempt <= (errored or {}).get(index, 0) else None,
                latency_ms=0.0,
                input_tokens=0,
                output_tokens=0,
                cost_usd=0.0,
                retries=0,
                transcript_json=json.dumps({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}]}),
                error_kind="provider" if attempt <= (errored or {}).get(index, 0) else None,
            )
            for attempt in range(1, 6)
        ]
        store.write_attempts(db, run_id, records)
        status = last_status if index == len(passes_per_run) - 1 else "complete"
        finish_recorded_run(db, run_id, records, status=status)


def test_history_reads_every_fingerprint_and_the_command_fails_on_a_new_drop(tmp_path, capsys):
    from evalcore.behaviour.history import run_points

    db = tmp_path / "evals.duckdb"
    _store_history(db, [5, 5, 5, 5, 2, 1], new_version_from=4)
    points = run_points(db, golden_path="golden/tasks.yaml")
    assert [(p.run_id, p.passes, p.attempts) for p in points] == [(f"run-{i:02d}", n, 5) for i, n in enumerate([5, 5, 5, 5, 2, 1])]
    assert [p.fingerprints.model_version for p in points] == ["v1"] * 4 + ["v2"] * 2
    settings = dict(points[0].fingerprints.settings)
    assert settings == {"judge": "none", "max_steps": "8", "seed": "7", "system_prompt": "Be brief.", "temperature": "0.0"}
    assert points[0].fingerprints.evalcore_version and points[0].fingerprints.server == "fp-1"
    assert run_points(db, golden_path="other.yaml") == []
    out = tmp_path / "drift.json"
    assert run_drift_command(argparse.Namespace(db=db, golden=None, json=out, min_baseline=None)) == 1
    printed = capsys.readouterr().out
    assert "weather-paris: DROP (found by the latest run)" in printed and "model update: sim/m reported version v2 instead of v1" in printed
    report = json.loads(out.read_text())
    (change,) = report["changes"]
    assert report["latestRunFlagged"] is True and change["cause"] == "model" and change["change_run_id"] == "run-04"
    assert change["before_interval"][1] == pytest.approx(1.0) and report["settings"]["min_baseline"] == DriftSettings().min_baseline


def test_history_skips_incomplete_runs(tmp_path):
    from evalcore.behaviour.history import run_points

    db = tmp_path / "evals.duckdb"
    _store_history(db, [5, 5, 5, 5, 0], last_status="failed")
    assert [p.run_id for p in run_points(db)] == [f"run-{i:02d}" for i in range(4)]


def test_a_run_with_errored_attempts_is_never_a_baseline_and_an_all_errored_night_is_a_gap(tmp_path):
    from evalcore.behaviour.history import run_points

    db = tmp_path / "evals.duckdb"
    # run-00 complete; run-01..04 passed every scored attempt but each had errored ones (run-02: all five); then 0/5 twice.
    _store_history(db, [5, 5, 5, 5, 5, 0, 0], errored={1: 1, 2: 5, 3: 2, 4: 1})
    points = run_points(db)
    assert [(p.run_id, p.passes, p.attempts, p.complete) for p in points] == [
        ("run-00", 5, 5, True),
        ("run-01", 4, 4, False),
        ("run-03", 3, 3, False),
        ("run-04", 4, 4, False),
        ("run-05", 0, 5, True),
        ("run-06", 0, 5, True),
    ]
    assert detect_changes(points) == []  # one complete run before the drop: no baseline yet
    assert drops([replace(p, complete=True) for p in points])  # had the errored runs counted, they would have been one


def test_the_nightly_run_report_carries_the_changes_that_run_found_and_fails_on_a_drop(tmp_path, reference_url, capsys):
    from evalcore.cli import main

    golden = tmp_path / "tasks.yaml"
    golden.write_text("cases:\n  - id: weather-paris\n    prompt: What's the weather in Paris?\n    expect_tool: get_weather\n    expect_args: {city: Paris}\n")
    script = tmp_path / "model.yaml"
    script.write_text(
        "cases:\n  weather-paris: {calls: [{name: get_weather, args: {city: Paris}}], text: Sunny.}\n"
        'from:\n  "2026-03-08":\n    defaults: {model_version: sim-2}\n    cases:\n      weather-paris: {no_call: true, text: Probably sunny.}\n'
    )
    db = tmp_path / "evals.duckdb"
    reports, exits = [], []
    for day in range(1, 10):
        out = tmp_path / f"report-{day}.json"
        arguments = ["run", "--golden", str(golden), "--models", f"sim/script:{script}", "--url", reference_url, "--db", str(db), "--out", str(out)]
        exits.append(main([*arguments, "--date", f"2026-03-0{day}"]))
        reports.append(json.loads(out.read_text()))
    assert [r["drift"]["changes"] for r in reports[:7]] == [[]] * 7 and exits[:7] == [0] * 7
    # 35/35 then 0/5: one run settles it, so the run that shows it fails that night, with a provisional flag.
    (provisional,) = reports[7]["drift"]["changes"]
    assert provisional["provisional"] is True and provisional["change_date"] == "2026-03-08" and provisional["cause"] == "model"
    assert (provisional["before_passes"], provisional["before_attempts"], provisional["after_passes"], provisional["after_attempts"]) == (35, 35, 0, 5)
    (change,) = reports[8]["drift"]["changes"]
    assert change["provisional"] is False and change["provisional_run_id"] == reports[7]["runId"] and change["change_date"] == "2026-03-08"
    assert (change["before_passes"], change["before_attempts"], change["after_passes"], change["after_attempts"]) == (35, 35, 0, 10)
    assert exits[7:] == [1, 1]
    assert reports[7]["gate"]["status"] == "fail" and reports[7]["gate"]["reason"].startswith("drift: this run flagged 1 drop(s)")
    # the Drift page's table says which flag one run raised, and which run raised it
    from evalcore.behaviour.history import run_points
    from evalcore.dashboard.data import changes_frame
    from evalcore.drift import detect_changes

    (row,) = changes_frame([c for c in detect_changes(run_points(db)) if c.kind == "drop"]).to_dict("records")
    assert (row["provisional"], row["provisional_run_id"]) == ("false", reports[7]["runId"])
    printed = capsys.readouterr().out
    assert "provisional drop (one run shows it" in printed and "drift fails this run: it flagged a drop" in printed


NIGHTLY_CASES = {"weather-paris": "Paris", "weather-london": "London", "weather-tokyo": "Tokyo", "weather-berlin": "Berlin"}


def _weather(city: str, **more: object) -> dict[str, object]:
    return {"calls": [{"name": "get_weather", "args": {"city": city}}], "text": "Sunny.", **more}


def test_a_nightly_run_and_the_drift_history_date_a_change_on_the_night_it_was_first_flagged(tmp_path, reference_url, capsys):
    """22 nights of real `evalcore run`s of two scripted models: each change carries one date everywhere, the night a run
    first flagged it; a provisional flag keeps that date when the next night confirms it."""
    import yaml

    from evalcore.cli import main
    from evalcore.dashboard import data as dashboard_data

    golden = tmp_path / "tasks.yaml"
    cases = [
        {"id": case, "prompt": f"What's the weather in {city}?", "expect_tool": "get_weather", "expect_args": {"city": city}}
        for case, city in NIGHTLY_CASES.items()
    ]
    golden.write_text(yaml.safe_dump({"cases": cases}))
    good = {case: _weather(city) for case, city in NIGHTLY_CASES.items()}
    guess = {"no_call": True, "text": "Probably sunny."}
    steady, drifting = tmp_path / "steady.yaml", tmp_path / "drifting.yaml"
    # steady: one bad night of weather-berlin (03-05: flagged provisionally, withdrawn the next night); weather-paris lost from 03-10
    steady_from = {"2026-03-05": {"cases": {"weather-berlin": guess}}, "2026-03-06": {"cases": {"weather-berlin": good["weather-berlin"]}}}
    steady_from["2026-03-10"] = {"cases": {"weather-paris": guess}}
    steady.write_text(yaml.safe_dump({"cases": good, "from": steady_from}))
    # drifting: weather-berlin passes 2/5 from 03-07 (one run does not settle that); a model update on 03-16 loses london (0/5) and tokyo (1/5)
    drifting_from: dict[str, object] = {"2026-03-07": {"cases": {"weather-berlin": _weather("Berlin", attempts={n: guess for n in (3, 4, 5)})}}}
    drifting_from["2026-03-16"] = {
        "defaults": {"model_version": "sim-2"},
        "cases": {"weather-london": guess, "weather-tokyo": _weather("Sydney", attempts={1: good["weather-tokyo"]})},
    }
    drifting.write_text(yaml.safe_dump({"cases": good, "from": drifting_from}))
    db = tmp_path / "evals.duckdb"
    models = f"sim/script:{steady},sim/script:{drifting}"
    reports, exits, said = [], [], {}
    for night in range(1, 23):
        out = tmp_path / f"report-{night:02d}.json"
        arguments = ["run", "--golden", str(golden), "--models", models, "--url", reference_url, "--db", str(db), "--out", str(out)]
        exits.append(main([*arguments, "--date", f"2026-03-{night:02d}"]))
        reports.append(json.loads(out.read_text()))
        said[reports[-1]["runDate"]] = capsys.readouterr().out

    def short(model: str) -> str:
        return Path(model.split(":", 1)[1]).stem

    # What each night's run said: the drops it flagged (its own drift), and the night each (model, case) was first flagged.
    flagged_by_night = {r["runDate"]: {(short(c["model"]), c["case_id"]): c for c in r["drift"]["changes"] if c["kind"] == "drop"} for r in reports}
    first_flag: dict[tuple[str, str], dict] = {}
    for night, flags in flagged_by_night.items():
        for pair, change in flags.items():
            first_flag.setdefault(pair, {**change, "night": night})
    assert {pair: c["night"] for pair, c in first_flag.items()} == {
        ("steady", "weather-berlin"): "2026-03-05",
        ("drifting", "weather-berlin"): "2026-03-08",
        ("steady", "weather-paris"): "2026-03-10",
        ("drifting", "weather-london"): "2026-03-16",
        ("drifting", "weather-tokyo"): "2026-03-16",
    }
    # a night whose run flagged a drop failed on it (the case gates fail the later nights anyway)
    assert [r["runDate"] for r in reports if r["gate"]["reason"].startswith("drift:")] == [n for n, flags in flagged_by_night.items() if flags]
    assert all(exits[int(n[-2:]) - 1] == 1 for n, flags in flagged_by_night.items() if flags)

    # `evalcore drift` and the Drift page's query over the whole history: every change the runs flagged (the withdrawn
    # one-night flag aside), each dated the night a run first flagged it, not the night it was confirmed.
    out = tmp_path / "drift.json"
    assert run_drift_command(argparse.Namespace(db=db, golden=None, json=out, min_baseline=None)) == 0
    printed = capsys.readouterr().out
    listed = {(short(c["model"]), c["case_id"]): c for c in json.loads(out.read_text())["changes"] if c["kind"] == "drop"}
    _, page_changes = dashboard_data.drift(db, reports[0]["golden"]["path"])
    on_page = {(short(c.model), c.case_id): c for c in page_changes if c.kind == "drop"}
    assert set(listed) == set(on_page) == set(first_flag) - {("steady", "weather-berlin")}
    flagged = {pair: (first_flag[pair]["night"], first_flag[pair]["change_date"], first_flag[pair]["detected_run_id"]) for pair in listed}
    assert {pair: (c["detected_date"], c["change_date"], c["detected_run_id"]) for pair, c in listed.items()} == flagged
    assert {pair: (c.detected_date.isoformat(), c.change_date.isoformat(), c.detected_run_id) for pair, c in on_page.items()} == flagged
    for pair, change in listed.items():
        assert first_flag[pair]["detected_date"] == first_flag[pair]["night"]
        assert change["confirmation"] == on_page[pair].confirmation == "confirmed", pair
        assert f"{change['change_date']}  {change['model']}  {change['case_id']}: DROP" in printed
    # A provisional flag: the run of its night said provisional, the next night's run confirmed it under the same date.
    for pair in (("steady", "weather-paris"), ("drifting", "weather-london"), ("drifting", "weather-tokyo")):
        flag, change = first_flag[pair], listed[pair]
        assert flag["provisional"] is True and flag["confirmation"] == "provisional" and flag["confirmed_run_id"] is None
        nights = list(flagged_by_night)
        next_night = nights[nights.index(flag["night"]) + 1]
        confirmed = flagged_by_night[next_night][pair]
        assert (confirmed["detected_date"], confirmed["confirmation"], confirmed["confirmed_date"]) == (flag["night"], "confirmed", next_night)
        assert (change["provisional"], change["provisional_run_id"], change["confirmed_date"]) == (False, flag["detected_run_id"], next_night)
        assert change["delay_runs"] == 1 and f"flagged on {flag['night']}, 1 run(s) in, provisionally; confirmed on {next_night}" in printed
        assert f"{flag['change_date']}  {flag['model']}  {pair[1]}: provisional drop (one run shows it" in said[flag["night"]]
        assert f"{flag['change_date']}  {flag['model']}  {pair[1]}: drop flagged on {flag['night']}, confirmed on {next_night}" in said[next_night]
    table = dashboard_data.changes_table(page_changes, {})
    assert set(table.loc[table["case"] == "weather-paris", "change"]) == {"drop 03-10, confirmed"}
    # A drop the full test found at once: flagged and confirmed by the same run.
    direct = listed[("drifting", "weather-berlin")]
    assert direct["provisional_run_id"] is None and direct["confirmed_run_id"] == direct["detected_run_id"]
