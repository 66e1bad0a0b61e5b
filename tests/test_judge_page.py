"""The Judge page (agreement per judge and rubric with its confusion matrix, the dangerous cell, the labelling queue) and
the drill-down's "Human: meets the rubric / does not" buttons, driven with Streamlit's AppTest against a real store."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.dashboard import queries
from evalcore.scoring.agreement import labelling_queue
from tests.judge_builders import JudgedRun, labelled_run

ROOT = Path(__file__).resolve().parents[1]
JUDGE_PAGE, HOME = str(ROOT / "pages" / "8_Judge.py"), str(ROOT / "app.py")


def test_the_labelling_queue_is_stratified_over_models_cases_and_both_verdicts():
    candidates = [((f"r{run}", model, case, attempt), verdict) for run in (1, 2) for model in ("a", "b") for case in ("c1", "c2")
                  for attempt, verdict in ((1, True), (2, True), (3, False))]  # fmt: skip
    queue = labelling_queue(candidates, 8)
    assert {(key[1], key[2], verdict) for key, verdict in queue} == {(m, c, v) for m in ("a", "b") for c in ("c1", "c2") for v in (True, False)}
    assert [verdict for _, verdict in queue] == [True, False] * 4  # the verdicts alternate, so a short queue has both
    assert labelling_queue(candidates, 100) == labelling_queue(list(reversed(candidates)), 100)  # the same store, the same queue
    assert sorted(labelling_queue(candidates, 100)) == sorted(candidates) and labelling_queue([], 5) == []


@pytest.fixture(scope="module")
def labelled(tmp_path_factory, reference_url) -> JudgedRun:
    return labelled_run(tmp_path_factory.mktemp("judge-page"), reference_url)


def _app(path: str, db: Path, monkeypatch, **params: str) -> AppTest:
    monkeypatch.setenv("EVALCORE_DB", str(db))
    app = AppTest.from_file(path)
    for key, value in params.items():
        app.query_params[key] = value
    app.run(timeout=120)
    assert not app.exception, app.exception
    return app


def test_the_judge_page_shows_agreement_the_dangerous_cell_and_what_to_label_next(labelled, monkeypatch, tmp_path):
    db = tmp_path / "evals.duckdb"
    shutil.copyfile(labelled.db, db)
    app = _app(JUDGE_PAGE, db, monkeypatch)
    agreement, confusion, dangerous, queue = (frame.value for frame in app.dataframe)
    [row] = agreement.to_dict("records")
    assert row["judge"] == "sim/judge" and row["n"] == 3 and row["status"] == "uncalibrated"
    # a=1 (attempt 1) b=1 (attempt 2) c=0 d=1 (attempt 5): p_o = 2/3, p_J = 2/3, p_H = 1/3, p_e = 2/9 + 2/9 = 4/9, κ = (2/3 - 4/9)/(5/9) = 0.4
    assert row["agreement"] == pytest.approx(2 / 3) and row["kappa"] == pytest.approx(0.4)
    assert confusion.to_dict("list") == {"judge \\ human": ["judge: pass", "judge: fail"], "human: pass": [1, 0], "human: fail": [1, 1]}
    [danger] = dangerous.to_dict("records")
    assert danger["attempt"] == 2 and danger["note"] == "no greeting"
    assert danger["drill_down"] == queries.drill_down_link(labelled.run_id, labelled.model, "greet", 2)
    assert sorted(queue["attempt"]) == [3, 4, 6]  # never one already labelled; both of the judge's verdicts
    assert set(queue["judge"]) == {"pass", "fail"}


def test_labelling_an_attempt_on_the_drill_down_changes_the_judge_page(labelled, monkeypatch, tmp_path):
    db = tmp_path / "evals.duckdb"
    shutil.copyfile(labelled.db, db)
    link = {"run": labelled.run_id, "model": labelled.model, "case": "greet", "attempt": "3"}
    app = _app(HOME, db, monkeypatch, **link)
    assert app.selectbox(key=f"matrix_drill_{labelled.model}_greet_attempt").value == 3  # the link opens its attempt
    key = f"matrix_drill_{labelled.model}_greet_left_human"
    app.text_input(key=f"{key}_note").input("says goodbye, not hello")
    app.button(key=f"{key}_fail").click().run(timeout=120)
    assert not app.exception, app.exception
    assert "Human label: does not meet the rubric" in " ".join(t.value for t in app.text)
    judge_page = _app(JUDGE_PAGE, db, monkeypatch)
    agreement, _, dangerous, queue = (frame.value for frame in judge_page.dataframe)
    assert agreement["n"].tolist() == [4]
    assert sorted(dangerous["attempt"]) == [2, 3] and "says goodbye, not hello" in dangerous["note"].tolist()
    assert 3 not in queue["attempt"].tolist()
