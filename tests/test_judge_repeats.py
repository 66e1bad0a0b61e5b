"""`--judge-repeats K`: each attempt graded K times, the majority its verdict, and the judge's agreement with itself
(flip rates, Fleiss' κ) against hand computations."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import jsonschema
import pytest

from evalcore.behaviour.runner import majority_verdict
from evalcore.cli import main
from evalcore.records import JudgeVerdict
from evalcore.scoring.agreement import fleiss_kappa, judge_consistency
from tests.judge_builders import judged_run


def test_fleiss_kappa_equals_a_hand_computation():
    # 4 attempts x 3 gradings, passes 3, 2, 0, 1: p = 6/12 = 0.5, P_e = 0.25 + 0.25 = 0.5
    # P_i = (p² + (3 - p)² - 3) / 6 = 1, 1/3, 1, 1/3: P̄ = 2/3; κ = (2/3 - 1/2) / (1/2) = 1/3
    votes = [(True, True, True), (True, True, False), (False, False, False), (False, False, True)]
    assert fleiss_kappa(votes) == pytest.approx(1 / 3)
    assert fleiss_kappa([(True, True, True), (False, False, False)]) == pytest.approx(1.0)  # unanimous on both classes
    assert fleiss_kappa([(True, True, True)] * 4) is None  # every vote one class: undefined, never NaN
    assert fleiss_kappa([]) is None and fleiss_kappa([(True,), (False,)]) is None  # no subject; one grading each
    found = judge_consistency({("m", "a"): votes[:2], ("m", "b"): votes[2:]}, 3)
    assert found["judged"] == 4 and found["flipRate"] == 0.5 and found["fleissKappa"] == pytest.approx(1 / 3)
    assert found["cases"] == [
        {"model": "m", "case": "a", "judged": 2, "flipped": 1, "flipRate": 0.5},
        {"model": "m", "case": "b", "judged": 2, "flipped": 1, "flipRate": 0.5},
    ]
    json.dumps(judge_consistency({("m", "a"): [(True, True, True)]}, 3), allow_nan=False)


def test_the_majority_of_the_gradings_is_the_verdict():
    gradings = [JudgeVerdict(True, 0.8, "fine", "j"), JudgeVerdict(False, 0.2, "missing", "j"), JudgeVerdict(True, 0.5, "ok", "j")]
    verdict = majority_verdict(gradings)
    assert verdict.passed is True and verdict.votes == (True, False, True) and verdict.score == pytest.approx(0.5)
    assert verdict.reason == "2 of 3 gradings: fine"
    assert majority_verdict(gradings[1:2]) == gradings[1]  # one grading: as it is


def test_a_run_graded_three_times_reports_the_judges_consistency(tmp_path, reference_url):
    run = judged_run(tmp_path, reference_url, [True, True, False, False, True], extra=["--judge-repeats", "3"])
    consistency = run.report["judgeConsistency"]
    # sim/judge is deterministic: it never changes its mind, and both classes occur, so κ = 1
    assert consistency["repeats"] == 3 and consistency["judged"] == 5 and consistency["flipRate"] == 0.0
    assert consistency["fleissKappa"] == pytest.approx(1.0)
    assert consistency["cases"] == [{"model": run.model, "case": "greet", "judged": 5, "flipped": 0, "flipRate": 0.0}]
    assert run.report["models"][0]["metrics"]["task_completion"] == pytest.approx(3 / 5)
    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(run.report)  # with its judge and judgeConsistency
    with duckdb.connect(str(run.db), read_only=True) as connection:
        rows = connection.execute("SELECT judge_json FROM attempts WHERE run_id = ? ORDER BY attempt", [run.run_id]).fetchall()
        plan = json.loads(connection.execute("SELECT plan_json FROM behaviour_runs WHERE run_id = ?", [run.run_id]).fetchone()[0])
    assert [json.loads(row[0])["votes"] for row in rows] == [[ok] * 3 for ok in (True, True, False, False, True)]
    assert plan["judgeRepeats"] == 3
    once = judged_run(tmp_path, reference_url, [True], name="once")
    assert once.report["judgeConsistency"] is None
    with duckdb.connect(str(once.db), read_only=True) as connection:
        [(stored,)] = connection.execute("SELECT judge_json FROM attempts WHERE run_id = ?", [once.run_id]).fetchall()
    assert "votes" not in json.loads(stored)  # one grading is stored as it always was


def test_an_even_number_of_repeats_is_refused(tmp_path, capsys):
    assert main(["run", "--judge", "sim/judge", "--judge-repeats", "2", "--db", str(tmp_path / "e.duckdb")]) == 2
    assert "--judge-repeats must be odd (1, 3, 5, ...) so a majority exists, got 2" in capsys.readouterr().err
