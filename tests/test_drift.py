"""Drift detection (evalcore.drift) on synthetic histories with known regressions and known noise, and its command."""

from __future__ import annotations

import json
import math
import random
from datetime import date, timedelta

import pytest

from evalcore.commands.drift import run_drift_command
from evalcore.drift import (
    MODEL_UPDATE,
    P_THRESHOLD,
    SERVER_CHANGE,
    SILENT_MODEL_UPDATE,
    RunPoint,
    case_flags,
    case_timelines,
    description_diff,
    detect_drift,
    fisher_one_sided_lower,
)

START = date(2026, 10, 1)
TOOLS_V1 = json.dumps([{"name": "search_knowledge_base", "description": "Search internal help-desk articles by keyword."}])
TOOLS_V2 = json.dumps([{"name": "search_knowledge_base", "description": "Look things up."}])


def history(passes: list[int], *, runs: int = 5, changes: dict[int, dict[str, str]] | None = None) -> list[RunPoint]:
    """A (model, case) history; `changes[i]` overrides fields from run i on."""
    fields = {"server_fingerprint": "fp-1", "case_hash": "case-1", "model_version": "v1", "server_tools_json": TOOLS_V1}
    points = []
    for index, count in enumerate(passes):
        fields.update((changes or {}).get(index, {}))
        points.append(RunPoint("sim/m", "case", f"run-{index:02d}", START + timedelta(days=index), count, runs, golden_hash="g", **fields))  # type: ignore[arg-type]
    return points


def test_fisher_matches_the_hypergeometric_tail_by_hand():
    # 35/35 before, 1/5 after: N=40, K=36, n=5; only x=1 is possible: C(36,1)·C(4,4)/C(40,5)
    assert fisher_one_sided_lower(35, 35, 1, 5) == pytest.approx(36 / math.comb(40, 5))
    # 28/35 before, 1/5 after: (C(29,0)·C(11,5) + C(29,1)·C(11,4)) / C(40,5) ≈ 0.0152
    assert fisher_one_sided_lower(28, 35, 1, 5) == pytest.approx((462 + 29 * 330) / math.comb(40, 5))
    assert fisher_one_sided_lower(10, 10, 5, 5) == 1.0  # no drop at all
    assert fisher_one_sided_lower(3, 5, 0, 0) == 1.0
    with pytest.raises(ValueError):
        fisher_one_sided_lower(6, 5, 1, 5)


def test_twenty_real_drops_are_all_flagged_with_their_cause():
    flagged = 0
    for length in range(3, 23):  # 3..22 good runs of history, then 1/5
        points = history([5] * length + [1], changes={length: {"model_version": "v2"}})
        flags = case_flags(points)
        assert [f.run_id for f in flags] == [points[-1].run_id]
        assert flags[0].attribution == MODEL_UPDATE and flags[0].detail == "version v1 -> v2"
        assert flags[0].p_value < P_THRESHOLD and flags[0].confidence == pytest.approx(1 - flags[0].p_value)
        flagged += 1
    assert flagged == 20


def test_stable_eighty_percent_noise_is_not_flagged():
    rng = random.Random(1234)
    # 4/5, 3/5, 5/5 ... at random: no run of any of 200 histories is flagged
    choice_flags = sum(len(case_flags(history([rng.choice([3, 4, 4, 5]) for _ in range(21)]))) for _ in range(200))
    assert choice_flags == 0
    # binomial(5, 0.8) noise: the latest run of 200 histories flags at most once
    latest_flags = 0
    for _ in range(200):
        points = history([sum(rng.random() < 0.8 for _ in range(5)) for _ in range(21)])
        latest_flags += sum(f.run_id == points[-1].run_id for f in case_flags(points))
    assert latest_flags <= 1


def test_a_drop_needs_history_and_size():
    assert case_flags(history([5, 5, 0])) == []  # only 2 earlier runs
    assert case_flags(history([5, 5, 5, 5, 5, 3])) == []  # 0.4 drop, p ≈ 0.02 with 25 samples
    assert case_flags(history([4, 4, 4, 4, 4, 4, 4, 2])) == []  # 0.4 drop from 80% is not significant


def test_one_regression_gives_one_flag_and_later_drops_are_still_caught():
    flags = case_flags(history([5] * 8 + [2] * 6 + [0]))
    assert [f.run_id for f in flags] == ["run-08"]
    flags = case_flags(history([5] * 8 + [5] * 6 + [0] * 3))
    assert [f.run_id for f in flags] == ["run-14"]


def test_attribution_order():
    server = case_flags(history([5] * 5 + [0], changes={5: {"server_fingerprint": "fp-2", "server_tools_json": TOOLS_V2, "model_version": "v2"}}))
    assert server[0].attribution == SERVER_CHANGE
    assert "changed description of search_knowledge_base" in server[0].detail and "+Look things up." in server[0].detail
    case = case_flags(history([5] * 5 + [0], changes={5: {"case_hash": "case-2", "model_version": "v2"}}))
    assert case[0].attribution == "golden case changed"
    silent = case_flags(history([5] * 5 + [0]))
    assert silent[0].attribution == SILENT_MODEL_UPDATE


def test_description_diff_lists_added_removed_and_changed_tools():
    old = [{"name": "a", "description": "Find things."}, {"name": "b", "description": "Old tool."}]
    new = [{"name": "a", "description": "Look things up."}, {"name": "c", "description": "New tool."}]
    diff = description_diff(old, new)
    assert diff.splitlines() == ["added tool c", "removed tool b", "changed description of a:", "  @@ -1 +1 @@", "  -Find things.", "  +Look things up."]
    assert description_diff(old, old) == ""


def test_timelines_carry_rates_and_flags():
    points = history([5] * 5 + [0])
    timeline = case_timelines(points, detect_drift(points))[("sim/m", "case")]
    assert [p.pass_rate for p in timeline] == [1.0] * 5 + [0.0]
    assert [p.flag is not None for p in timeline] == [False] * 5 + [True]


def test_drift_command_on_an_empty_store(tmp_path, capsys):
    import argparse

    args = argparse.Namespace(db=tmp_path / "none.duckdb", golden=None, json=None)
    assert run_drift_command(args) == 0
    assert "no complete behaviour runs" in capsys.readouterr().out


def _store_history(db, passes_per_run: list[int], *, last_status: str = "complete") -> None:
    """A store with one model x case per run, written through the store's own functions."""
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
            config={},
        )
        records = [
            AttemptRecord(
                model="sim/m",
                case_id="weather-paris",
                attempt=attempt,
                case_hash="case-1",
                case_kind="hard",
                simulated=True,
                model_version="v2" if index == len(passes_per_run) - 1 and attempt > 1 else "v1",
                score=AttemptScore((Score("selection", 1.0, True), Score("arguments", 1.0, True)), attempt <= passes),
                tool_calls=(),
                final_text=None,
                stop_reason="final",
                error=None,
                latency_ms=0.0,
                input_tokens=0,
                output_tokens=0,
                cost_usd=0.0,
                retries=0,
                transcript_json="{}",
            )
            for attempt in range(1, 6)
        ]
        store.write_attempts(db, run_id, records)
        status = last_status if index == len(passes_per_run) - 1 else "complete"
        store.finish_run(db, run_id, status=status, passed=True, report=None)


def test_history_and_command_fail_on_a_flagged_latest_run(tmp_path, capsys):
    import argparse

    from evalcore.store.history import run_points

    db = tmp_path / "evals.duckdb"
    _store_history(db, [5, 5, 5, 5, 0])
    points = run_points(db, golden_path="golden/tasks.yaml")
    assert [(p.run_id, p.passes, p.runs) for p in points] == [(f"run-{i:02d}", n, 5) for i, n in enumerate([5, 5, 5, 5, 0])]
    assert points[-1].model_version == "v2"  # the most common version in that run
    assert run_points(db, golden_path="other.yaml") == []
    out = tmp_path / "drift.json"
    assert run_drift_command(argparse.Namespace(db=db, golden=None, json=out)) == 1
    assert "weather-paris: 20/20 -> 0/5" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["latestRunFlagged"] is True and report["flags"][0]["attribution"] == MODEL_UPDATE


def test_history_skips_incomplete_runs(tmp_path):
    from evalcore.store.history import run_points

    db = tmp_path / "evals.duckdb"
    _store_history(db, [5, 5, 5, 5, 0], last_status="failed")
    assert [p.run_id for p in run_points(db)] == [f"run-{i:02d}" for i in range(4)]


def test_the_nightly_run_report_carries_the_drift_flags_of_that_run(tmp_path, reference_url, capsys):
    from evalcore.cli import main

    golden = tmp_path / "tasks.yaml"
    golden.write_text("cases:\n  - id: weather-paris\n    prompt: What's the weather in Paris?\n    expect_tool: get_weather\n    expect_args: {city: Paris}\n")
    script = tmp_path / "model.yaml"
    script.write_text(
        "cases:\n  weather-paris: {calls: [{name: get_weather, args: {city: Paris}}], text: Sunny.}\n"
        'from:\n  "2026-03-05":\n    defaults: {model_version: sim-2}\n    cases:\n      weather-paris: {no_call: true, text: Probably sunny.}\n'
    )
    db = tmp_path / "evals.duckdb"
    reports = []
    for day in range(1, 6):
        out = tmp_path / f"report-{day}.json"
        arguments = ["run", "--golden", str(golden), "--models", f"sim/script:{script}", "--url", reference_url, "--db", str(db), "--out", str(out)]
        main([*arguments, "--date", f"2026-03-0{day}"])
        reports.append(json.loads(out.read_text()))
    assert [r["drift"]["flags"] for r in reports[:4]] == [[], [], [], []]
    (flag,) = reports[4]["drift"]["flags"]
    assert flag["case_id"] == "weather-paris" and (flag["before_passes"], flag["after_passes"]) == (20, 0) and flag["attribution"] == MODEL_UPDATE
    assert "drift: 1 case(s) regressed" in capsys.readouterr().out
