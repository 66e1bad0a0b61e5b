"""Human labels of attempts and the judge's agreement with them: κ, its interval, TPR, TNR and the status against hand
computations (docs/metrics.md, "Judge agreement"), the label import's refusals, and a rubric edited after labelling."""

from __future__ import annotations

import json
import math

import duckdb
import pytest

from evalcore.cli import main
from evalcore.scoring.agreement import Confusion, StatusThresholds, agreement
from evalcore.store.db import SCHEMA_VERSION
from tests.judge_builders import judged_run, label_file, pairs, write_golden

# --- the statistics, by hand ------------------------------------------------------------------------------------------


def test_kappa_interval_and_rates_equal_a_hand_computation():
    # a=20 b=5 c=5 d=20, n=50: p_o = 40/50 = 0.8; p_J = p_H = 0.5, so p_e = 0.5; κ = (0.8 - 0.5) / 0.5 = 0.6.
    # Fleiss-Cohen-Everitt: cells 0.4 0.1 / 0.1 0.4, marginals 0.5; 1 - κ = 0.4
    #   diagonal 2 · 0.4 · (1 - 1.0 · 0.4)² = 0.288; off 0.4² · (0.1 · 1² + 0.1 · 1²) = 0.032; minus (0.6 - 0.5 · 0.4)² = 0.16
    #   SE² = (0.288 + 0.032 - 0.16) / (50 · 0.5²) = 0.0128, SE = 0.113137; κ ± 1.96 SE = [0.37825, 0.82175]
    found = agreement("j", "r", Confusion(20, 5, 5, 20))
    assert found.n == 50 and found.agreement == pytest.approx(0.8) and found.kappa == pytest.approx(0.6)
    assert found.kappa_ci == pytest.approx((0.6 - 1.959964 * math.sqrt(0.0128), 0.6 + 1.959964 * math.sqrt(0.0128)), abs=1e-6)
    assert found.kappa_ci == pytest.approx((0.37825, 0.82175), abs=1e-4)
    assert found.tpr == pytest.approx(20 / 25) and found.tnr == pytest.approx(20 / 25)
    assert found.status == "advisory"  # n ≥ 50, κ ≥ 0.4, but the lower bound 0.378 < 0.6


def test_status_table():
    # n = 7: κ = (5/7 - 25/49) / (24/49) = 10/24, but fewer than 30 labels
    small = agreement("j", "r", Confusion(3, 1, 1, 2))
    assert small.kappa == pytest.approx(10 / 24) and small.status == "uncalibrated"
    # n = 30: p_o = 2/3, p_e = 0.5, κ = 1/3 < 0.4
    assert agreement("j", "r", Confusion(10, 5, 5, 10)).status == "unreliable"
    # n = 100: p_o = 0.95, p_e = 0.47·0.48 + 0.53·0.52 = 0.5012, κ = 0.4488/0.4988 = 0.89976; lower bound well above 0.6
    trusted = agreement("j", "r", Confusion(45, 2, 3, 50))
    assert trusted.kappa == pytest.approx(0.4488 / 0.4988) and trusted.kappa_ci is not None and trusted.kappa_ci[0] >= 0.6
    assert trusted.status == "trusted"
    # n = 40, κ high but fewer than 50 labels: advisory
    assert agreement("j", "r", Confusion(20, 0, 0, 20)).status == "advisory"
    # a judge that passes everything while humans disagree: κ = 0, unreliable (never hidden as undefined)
    constant = agreement("j", "r", Confusion(20, 15, 0, 0))
    assert constant.kappa == pytest.approx(0.0) and constant.status == "unreliable" and constant.tnr == 0.0
    # the thresholds are options
    assert agreement("j", "r", Confusion(10, 5, 5, 10), StatusThresholds(unreliable_below=0.3)).status == "advisory"
    assert agreement("j", "r", Confusion(3, 1, 1, 2), StatusThresholds(min_labels=5, trusted_min_labels=5, trusted_lower_bound=-1)).status == "trusted"


def test_undefined_kappa_is_said_never_nan():
    one_class = agreement("j", "r", Confusion(30, 0, 5, 0))  # every human label is pass
    assert one_class.kappa is None and one_class.kappa_ci is None and one_class.tnr is None and one_class.tpr == pytest.approx(30 / 35)
    assert one_class.status == "uncalibrated" and "κ undefined: every human label is pass" in one_class.reason
    nothing = agreement("j", "r", Confusion())
    assert nothing.n == 0 and nothing.agreement is None and nothing.kappa is None and nothing.tpr is None and nothing.status == "uncalibrated"
    assert "κ undefined: no labelled attempts" in nothing.reason
    for found in (one_class, nothing):
        json.dumps(found.to_json(), allow_nan=False)  # null, never NaN


# --- labels in the store, and `judge-agreement` -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fifty(tmp_path_factory, reference_url):
    """A run of 50 attempts graded by sim/judge, and the human labels that make a=20 b=5 c=5 d=20 (κ = 0.6), not imported."""
    directory = tmp_path_factory.mktemp("judged")
    verdicts, labels = pairs(20, 5, 5, 20)
    run = judged_run(directory, reference_url, verdicts, extra=["--concurrency", "16", "--model-concurrency", "16"])
    return run, label_file(directory / "labels.csv", run, labels), directory


def _agreement_json(db, capsys) -> list[dict]:
    capsys.readouterr()
    assert main(["judge-agreement", "--db", str(db), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["judges"]


def test_labels_import_and_the_agreement_of_a_real_judge(fifty, capsys, tmp_path):
    run, labels, _ = fifty
    db = tmp_path / "evals.duckdb"
    db.write_bytes(run.db.read_bytes())
    [before] = _agreement_json(db, capsys)
    assert before["n"] == 0 and before["kappa"] is None and before["status"] == "uncalibrated"
    assert main(["labels", "import", str(labels), "--db", str(db)]) == 0
    [judge] = _agreement_json(db, capsys)
    assert judge["model"] == "sim/judge" and judge["n"] == 50
    assert judge["confusion"] == {"judgePass_humanPass": 20, "judgePass_humanFail": 5, "judgeFail_humanPass": 5, "judgeFail_humanFail": 20}
    assert judge["agreement"] == pytest.approx(0.8) and judge["kappa"] == pytest.approx(0.6)
    assert judge["kappaCi"] == pytest.approx([0.37825, 0.82175], abs=1e-4)
    assert judge["tpr"] == pytest.approx(0.8) and judge["tnr"] == pytest.approx(0.8) and judge["status"] == "advisory"
    assert main(["judge-agreement", "--db", str(db), "--judge-trusted-lower-bound", "0.3"]) == 0
    assert "trusted" in capsys.readouterr().out
    # export, then import the export again: the same labels
    assert main(["labels", "export", "--db", str(db), "--out", str(tmp_path / "out.csv")]) == 0
    exported = (tmp_path / "out.csv").read_text().splitlines()
    assert len(exported) == 51 and exported[0].startswith("run_id,model,case_id,attempt,label,labeller,note,rubric_hash")
    assert main(["labels", "import", str(tmp_path / "out.csv"), "--db", str(db)]) == 0
    assert _agreement_json(db, capsys)[0]["kappa"] == pytest.approx(0.6)


def test_a_bad_label_file_is_refused_line_by_line_and_nothing_is_stored(fifty, capsys, tmp_path):
    run, _, _ = fifty
    db = tmp_path / "evals.duckdb"
    db.write_bytes(run.db.read_bytes())
    bad = tmp_path / "bad.csv"
    good = f"{run.run_id},{run.model},greet"
    bad.write_text(
        "run_id,model,case_id,attempt,label,labeller,note\n"
        f"{good},1,pass,ann,fine\n"
        f"{good},2,maybe,ann,\n"
        f"{good},x,pass,ann,\n"
        f"{run.run_id},{run.model},no-such-case,1,fail,ann,\n"
        f"{good},1,fail,bob,\n"
        f"{good},3,,ann,\n"
    )
    capsys.readouterr()
    assert main(["labels", "import", str(bad), "--db", str(db)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: {bad}:3: label 'maybe' is not pass or fail (does the final answer meet the rubric?)"
    assert err[1] == f"error: {bad}:4: attempt 'x' is not an attempt number (1, 2, ...)"
    assert err[2].startswith(f"error: {bad}:5: no attempt 1 of {run.model} on case no-such-case in run {run.run_id}")
    assert err[3] == f"error: {bad}:6: the same attempt as line 2; an attempt takes one label"
    assert err[4] == f"error: {bad}:7: empty label"
    assert err[5] == f"error: {bad}: nothing stored (5 bad line(s)); fix them and import again"
    assert main(["labels", "export", "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines() == ["run_id,model,case_id,attempt,label,labeller,note,rubric_hash,labelled_at"]
    (tmp_path / "columns.csv").write_text("run_id,model,case,attempt,label\n")
    assert main(["labels", "import", str(tmp_path / "columns.csv"), "--db", str(db)]) == 2
    assert f"{tmp_path / 'columns.csv'}:1: missing column(s) case_id; unknown column(s) case" in capsys.readouterr().err


def test_a_rubric_changed_after_labelling_starts_its_figures_afresh(tmp_path, reference_url, capsys):
    verdicts, labels = pairs(2, 1, 0, 2)
    first = judged_run(tmp_path, reference_url, verdicts, name="first")
    assert main(["labels", "import", str(label_file(tmp_path / "labels.csv", first, labels)), "--db", str(first.db)]) == 0
    [old] = _agreement_json(first.db, capsys)
    assert old["n"] == 5
    write_golden(tmp_path, rubric="Judge whether the user was greeted warmly.")  # the rubric text changes
    second = judged_run(tmp_path, reference_url, verdicts, name="second")
    found = {entry["rubricHash"]: entry for entry in _agreement_json(first.db, capsys)}
    assert len(found) == 2 and found[old["rubricHash"]]["n"] == 5
    [new] = [entry for hash_, entry in found.items() if hash_ != old["rubricHash"]]
    assert new["n"] == 0 and new["kappa"] is None and new["status"] == "uncalibrated"
    # an exported label of the old rubric cannot be put on an attempt judged against the new one
    assert main(["labels", "export", "--db", str(first.db), "--out", str(tmp_path / "old.csv")]) == 0
    moved = (tmp_path / "old.csv").read_text().replace(first.run_id, second.run_id).replace(first.model, second.model)
    (tmp_path / "moved.csv").write_text(moved)
    capsys.readouterr()
    assert main(["labels", "import", str(tmp_path / "moved.csv"), "--db", str(first.db)]) == 2
    assert f"{tmp_path / 'moved.csv'}:2: labelled against rubric {old['rubricHash'][:12]}, but the attempt was judged against rubric" in capsys.readouterr().err


def test_a_store_of_the_previous_schema_gets_the_labels_table(fifty, capsys, tmp_path):
    run, labels, _ = fifty
    db = tmp_path / "evals.duckdb"
    db.write_bytes(run.db.read_bytes())
    with duckdb.connect(str(db)) as connection:  # as evalcore wrote it at schema 14 (the later steps run again on it)
        connection.execute("DROP TABLE judge_labels")
        connection.execute("DELETE FROM schema_version WHERE version >= 15")
    assert main(["labels", "import", str(labels), "--db", str(db)]) == 0
    assert _agreement_json(db, capsys)[0]["n"] == 50
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT max(version) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        assert connection.execute("SELECT count(*) FROM attempts WHERE run_id = ?", [run.run_id]).fetchone() == (50,)


def test_an_attempt_reused_by_the_cache_counts_once(tmp_path, reference_url, capsys):
    from evalcore.store.judge_labels import judged_attempts

    verdicts = [True, False, True, True]
    first = judged_run(tmp_path, reference_url, verdicts, name="first")
    assert main(["labels", "import", str(label_file(tmp_path / "first.csv", first, [True, False, False])), "--db", str(first.db)]) == 0
    again = judged_run(tmp_path, reference_url, verdicts, name="again", extra=["--cache"])  # the same four attempts, copied
    [judge] = _agreement_json(first.db, capsys)
    assert judge["n"] == 3  # the copies are no new evidence
    # a person labels the copies too, attempt 3 differently: still 3 attempts, each with its newest label
    assert main(["labels", "import", str(label_file(tmp_path / "again.csv", again, [True, False, True])), "--db", str(first.db)]) == 0
    [judge] = _agreement_json(first.db, capsys)
    assert judge["n"] == 3 and judge["confusion"]["judgePass_humanPass"] == 2 and judge["confusion"]["judgeFail_humanFail"] == 1
    queue = judged_attempts(first.db, judge_model="sim/judge", rubric_hash=judge["rubricHash"])
    assert [(key[0], key[3], labelled) for key, _, labelled in queue] == [(first.run_id, n, n < 4) for n in (1, 2, 3, 4)]
