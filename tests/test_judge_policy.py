"""`--judge-policy`: the judge's standing travels with every verdict (report, stored run, gate line, Matrix page), and under
`trusted` a judge that has not earned trust grades and is shown but enters neither `passed` nor the gate."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.behaviour.plan import RunPlan
from evalcore.cli import main
from evalcore.models.types import ModelSpec
from evalcore.records import JudgeTrust
from tests.judge_builders import JudgedRun, judged_run, label_file, pairs

HOME = str(Path(__file__).resolve().parents[1] / "pages" / "0_Matrix.py")
UNRELIABLE = "judge sim/judge unreliable (30 labels, κ 0.33)"


@pytest.fixture(scope="module")
def history(tmp_path_factory, reference_url) -> dict[str, JudgedRun]:
    """A green baseline whose judge passed everything; then 30 judged attempts labelled so κ = 1/3 (unreliable); then the
    same 5 attempts, 2 of them failed by the judge, under `--judge-policy trusted` and under `always`."""
    directory = tmp_path_factory.mktemp("policy")
    runs = {"baseline": judged_run(directory, reference_url, [True] * 5, name="baseline")}
    verdicts, labels = pairs(10, 5, 5, 10)  # p_o = 2/3, p_e = 1/2: κ = 1/3 < 0.4 with n = 30
    runs["labelled"] = judged_run(directory, reference_url, verdicts, name="labelled")
    assert main(["labels", "import", str(label_file(directory / "labels.csv", runs["labelled"], labels)), "--db", str(runs["labelled"].db)]) == 0
    mixed = [True, False, True, False, True]
    runs["trusted"] = judged_run(directory, reference_url, mixed, name="trusted", extra=["--judge-policy", "trusted"])
    runs["always"] = judged_run(directory, reference_url, mixed, name="always")
    runs["cached"] = judged_run(directory, reference_url, mixed, name="cached", extra=["--judge-policy", "trusted", "--cache"])
    return runs


def _stored(run: JudgedRun) -> tuple[dict, list[bool], dict]:
    with duckdb.connect(str(run.db), read_only=True) as connection:
        report, plan = connection.execute("SELECT report_json, plan_json FROM behaviour_runs WHERE run_id = ?", [run.run_id]).fetchone()
        passed = [row[0] for row in connection.execute("SELECT passed FROM attempts WHERE run_id = ? ORDER BY attempt", [run.run_id]).fetchall()]
    return json.loads(report), passed, json.loads(plan)


def test_under_trusted_an_unreliable_judge_grades_and_is_shown_but_neither_passes_nor_gates(history):
    run = history["trusted"]
    judge = {"model": "sim/judge", "status": "unreliable", "kappa": pytest.approx(1 / 3), "n": 30, "policy": "trusted", "gated": False}
    assert {key: run.report["judge"][key] for key in judge} == judge
    [model] = run.report["models"]
    assert model["metrics"]["task_completion"] == pytest.approx(3 / 5)  # the judge graded, and is shown
    assert model["metrics"]["pass_rate"] == 1.0  # ... but its two fails entered no attempt's `passed`
    # the baseline's task_completion was 1.0: a drop of 0.4, yet the gate leaves the judge's figure out
    assert run.report["gate"]["status"] == "pass" and run.report["regressions"] == []
    line = f"{UNRELIABLE}: task_completion reported, not gated (--judge-policy trusted)"
    assert f"  note: {line}" in run.out.splitlines() and line in run.report["gate"]["notes"]
    stored, passed, plan = _stored(run)
    assert stored["judge"] == run.report["judge"] and passed == [True] * 5
    assert plan["judgeTrust"] == run.report["judge"]  # the plan carries it: a resume and the cache obey it


def test_under_always_the_same_judge_gates_and_the_line_still_shows_its_status(history):
    run = history["always"]
    assert run.report["judge"]["policy"] == "always" and run.report["judge"]["gated"] is True
    assert run.report["judge"]["status"] == "unreliable"
    assert run.report["models"][0]["metrics"]["pass_rate"] == pytest.approx(3 / 5)
    assert run.report["gate"]["status"] == "fail"
    assert f"  note: {UNRELIABLE}: task_completion gated" in run.out.splitlines()
    _, passed, _ = _stored(run)
    assert passed == [True, False, True, False, True]
    # with no labels at all, the baseline's judge was uncalibrated, and (policy always) gated
    assert history["baseline"].report["judge"] | {"rubricHash": ""} == {
        "model": "sim/judge",
        "rubricHash": "",
        "status": "uncalibrated",
        "kappa": None,
        "n": 0,
        "policy": "always",
        "gated": True,
    }


def test_the_matrix_page_says_what_the_gate_line_says(history, monkeypatch):
    run = history["trusted"]
    monkeypatch.setenv("EVALCORE_DB", str(run.db))
    app = AppTest.from_file(HOME)
    app.query_params["run"] = run.run_id
    app.run(timeout=120)
    assert not app.exception, app.exception
    notes = [e.value for e in app.info if "judge sim/judge" in e.value]
    line = f"{UNRELIABLE}: task_completion reported, not gated (--judge-policy trusted)"
    assert notes == [f"Run {run.run_id}: {line}. Judge page: its agreement with human labels."]
    matrix = app.get("html")[0].proto.body
    assert re.search(r"5/5", matrix)  # the cell counts `passed` as the report does


def test_the_cache_key_tells_a_gating_judge_from_one_that_is_not():
    spec = ModelSpec("sim/lexical")
    plan = RunPlan("run", "g", "h", ("c",), None, (spec,), 1, ModelSpec("sim/judge"), 8, 5.0, "2026-12-01", 0.02, 0.0, "t", "fp", "0")
    trusted = replace(plan, judge_trust=JudgeTrust("sim/judge", "none", "trusted", 0.9, 60, "trusted"))
    untrusted = replace(plan, judge_trust=JudgeTrust("sim/judge", "none", "advisory", 0.5, 60, "trusted"))
    always = replace(plan, judge_trust=JudgeTrust("sim/judge", "none", "advisory", 0.5, 60, "always"))
    key = plan.attempt_key(spec, "case", 1)
    assert trusted.attempt_key(spec, "case", 1) == always.attempt_key(spec, "case", 1) == key  # the judge gates: keys as before
    assert untrusted.attempt_key(spec, "case", 1) != key
    assert RunPlan.from_json(untrusted.to_json()) == untrusted


def test_the_cache_reuses_only_attempts_whose_judge_gated_alike(history):
    """The `always` run is newer and ran the same answers, but its judge's verdicts entered `passed`: under `trusted`
    only the earlier `trusted` run's attempts may stand in."""
    run = history["cached"]
    with duckdb.connect(str(run.db), read_only=True) as connection:
        rows = connection.execute("SELECT cached_from, passed FROM attempts WHERE run_id = ? ORDER BY attempt", [run.run_id]).fetchall()
    assert rows == [(history["trusted"].run_id, True)] * 5
    assert run.report["judge"]["gated"] is False and run.report["models"][0]["metrics"]["pass_rate"] == 1.0


def test_a_resumed_or_merged_run_keeps_the_judge_standing_its_plan_carries(tmp_path):
    from evalcore.behaviour.runner import BehaviourConfig, planned_config, with_judge_trust

    spec = ModelSpec("sim/lexical")
    plan = RunPlan("run", "g", "h", ("c",), None, (spec,), 1, ModelSpec("sim/judge"), 8, 5.0, "2026-12-01", 0.02, 0.0, "t", "fp", "0")
    plan = replace(plan, judge_trust=JudgeTrust("sim/judge", "none", "unreliable", 0.2, 40, "trusted"))
    given = BehaviourConfig(tmp_path / "g.yaml", (spec,), tmp_path / "evals.duckdb", judge=ModelSpec("sim/judge"))  # policy always, as typed now
    restored = planned_config(given, plan, models=(spec,), judge=plan.judge)
    assert restored.judge_trust == plan.judge_trust and restored.judge_policy == "trusted"
    assert with_judge_trust(restored, None) is restored  # type: ignore[arg-type]  # never read again from today's labels
