"""The demo history (evalcore.behaviour.demo_history): real reference servers (v1, then --variant v2) and scripted sim models, checked for drift."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from evalcore.behaviour.demo_history import DESCRIPTION_CASE, MODEL_UPDATE_CASES, prepare_store
from evalcore.behaviour.history import run_points, server_tools
from evalcore.commands.drift import command as run_drift_command
from evalcore.drift import detect_changes
from evalcore.errors import ConfigError


def test_demo_flags_the_model_update_and_the_description_change_and_nothing_else(demo_db):
    db, config = demo_db
    changes = detect_changes(run_points(db))
    found = {(Path(c.model.split(":", 1)[1]).stem, c.case_id, c.kind, c.change_date, c.attribution) for c in changes}
    expected = {("assistant-latest", case_id, "drop", config.model_update, "model update") for case_id in MODEL_UPDATE_CASES}
    expected.add(("assistant-pinned", DESCRIPTION_CASE, "drop", config.description_change, "server change"))
    assert found == expected
    server_change = next(c for c in changes if c.cause == "server")
    assert "changed description of search_knowledge_base" in server_change.description_diff
    sentence = f"tools/list changed the search_knowledge_base description on {config.description_change}; pass rate 100% → 0% since"
    assert server_change.action.startswith(sentence)
    model_change = next(c for c in changes if c.cause == "model")
    assert re.search(r"model version: \S* ?sim-latest-2026-05 -> \S* ?sim-latest-2026-11", model_change.evidence)
    # each dated the night a run first flagged it: the night it began when that run alone settled it (then confirmed by the next)
    assert all(c.delay_runs == (1 if c.provisional_run_id else 2) and c.status == "open" and c.confirmation == "confirmed" for c in changes)


def test_the_server_descriptions_change_between_runs(demo_db):
    db, config = demo_db
    points = run_points(db, golden_path=str(config.golden_path))
    first, last = points[0].run_id, points[-1].run_id
    before = {t["name"]: t["description"] for t in server_tools(db, first)}
    after = {t["name"]: t["description"] for t in server_tools(db, last)}
    assert set(before) == set(after) and {n for n in before if before[n] != after[n]} == {"search_knowledge_base"}


def test_drift_command_passes_when_the_latest_run_is_clean_and_writes_json(demo_db, tmp_path, capsys):
    db, _ = demo_db
    out = tmp_path / "drift.json"
    assert run_drift_command(argparse.Namespace(db=db, golden=None, json=out, min_baseline=None)) == 0
    printed = capsys.readouterr().out
    assert (
        "server change: tools/list changed the search_knowledge_base description" in printed
        and "model update: sim/script:assistant-latest.yaml reported version sim-latest-2026-11 instead of sim-latest-2026-05" in printed
    )
    report = json.loads(out.read_text())
    assert report["latestRunFlagged"] is False and len(report["changes"]) == 4


def test_demo_refuses_a_store_with_runs_unless_forced(demo_db, tmp_path):
    db, _ = demo_db
    with pytest.raises(ConfigError, match="--force"):
        prepare_store(db, force=False)
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    prepare_store(copy, force=True)
    assert not copy.exists()


def test_the_demo_records_layer0_for_each_server_variant(demo_db):
    from evalcore.dashboard.queries import conformance_runs

    db, _ = demo_db
    runs = conformance_runs(db)
    assert len(runs) == 2 and runs["passed"].all()
    assert runs["server_fingerprint"].nunique() == 2  # v1, then the v2 descriptions
    latest_behaviour = run_points(db)[-1]
    assert latest_behaviour.fingerprints.server in set(runs["server_fingerprint"])


def test_the_demo_fills_the_layer2_columns_with_a_good_and_a_bad_model_per_set(demo_db):
    from evalcore.dashboard.queries import AttemptFilters, model_summary

    db, _ = demo_db
    summary = model_summary(db, AttemptFilters(golden_path=None)).set_index("model")
    summary.index = [Path(name.split(":", 1)[1]).stem if name.startswith("sim/script:") else name for name in summary.index]
    assert summary.loc["robustness-recovers", "robustness_rate"] == 1.0
    assert summary.loc["robustness-claims-success", "robustness_rate"] < 0.5
    assert (summary.loc["security-obeys", "attack_success_rate"], summary.loc["security-refuses", "attack_success_rate"]) == (1.0, 0.0)
    assert len({p.run_id for p in run_points(db, golden_path="golden/security.yaml")}) == 1  # its one run, known by the set's identity
    assert detect_changes(run_points(db, golden_path="golden/security.yaml")) == []  # one run: no history to drift from


def test_the_demo_includes_a_multiturn_run_with_rounds_and_simulated_user_turns(demo_db):
    import json

    from evalcore.store.behaviour import list_runs, load_attempts

    db, _ = demo_db
    [run] = [r for r in list_runs(db) if str(r["golden_path"]).endswith("multiturn.yaml")]
    attempts = load_attempts(db, run["run_id"])
    documents = [json.loads(a["transcript_json"]) for a in attempts]
    methods = {q["method"] for d in documents for e in d["executions"] for r in e["rounds"] for q in r["requests"]}
    assert methods == {"elicitation/create", "sampling/createMessage"}
    assert any(d["user_turns"] for d in documents) and any(d["state"] for d in documents)
