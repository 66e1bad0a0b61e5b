"""One golden set, one history: its identity in the store never depends on how its path was typed; older stores migrate."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from evalcore.cli import main
from evalcore.paths import golden_file, golden_identity
from evalcore.store.behaviour import last_green_report, list_runs
from evalcore.store.db import SCHEMA_VERSION, connect
from tests.builders import migrate_to

ROOT = Path(__file__).resolve().parents[1]
MINI_GOLDEN = """server: reference
cases:
  - id: weather-paris
    prompt: "What's the weather like in Paris right now?"
    expect_tool: get_weather
    expect_args: {city: Paris}
  - id: chit-chat
    prompt: "Thanks, that's all for today!"
    expect_tool: null
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A user's project: a pyproject.toml at its root, a golden set in golden/, the shell in a subfolder of it."""
    root = tmp_path / "shop"
    (root / "golden").mkdir(parents=True)
    (root / "ci").mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    (root / "golden" / "mini.yaml").write_text(MINI_GOLDEN)
    monkeypatch.chdir(root)
    return root


def test_one_file_has_one_identity_however_it_is_typed(project, monkeypatch):
    spellings = ["golden/mini.yaml", "./golden/mini.yaml", "golden//mini.yaml", "ci/../golden/mini.yaml", str(project / "golden" / "mini.yaml")]
    assert {golden_identity(spelling) for spelling in spellings} == {"golden/mini.yaml"}
    monkeypatch.chdir(project / "ci")
    assert golden_identity("../golden/mini.yaml") == "golden/mini.yaml"
    assert golden_file("golden/mini.yaml") == project / "golden" / "mini.yaml"  # found from anywhere in the project


def test_a_file_outside_any_project_is_known_by_its_absolute_path(tmp_path, monkeypatch):
    loose = tmp_path / "loose.yaml"
    loose.write_text(MINI_GOLDEN)
    monkeypatch.chdir(tmp_path)
    if any((folder / marker).exists() for folder in loose.parents for marker in (".git", "pyproject.toml")):
        pytest.skip("the temporary folder lies inside a project here")
    assert golden_identity("loose.yaml") == loose.resolve().as_posix() == golden_identity(loose)


def test_the_bundled_golden_set_is_golden_tasks_yaml():
    assert golden_identity(ROOT / "golden" / "tasks.yaml") == "golden/tasks.yaml"


def test_cli_and_run_page_spellings_share_one_history(project, reference_url, capsys):
    """The CLI types a relative path, the Run page an absolute one: the second run gates against the first."""
    db = project / "data" / "evals.duckdb"
    common = ["--models", "sim/lexical", "--url", reference_url, "--runs", "1", "--db", str(db)]
    assert main(["run", "--golden", "golden/mini.yaml", *common, "--out", str(project / "first.json")]) == 0
    assert "this run becomes the baseline" in capsys.readouterr().out
    assert main(["run", "--golden", str(project / "golden" / "mini.yaml"), *common, "--out", str(project / "second.json")]) == 0
    out = capsys.readouterr().out
    first = json.loads((project / "first.json").read_text())["runId"]
    assert f"below green run {first}" in out
    assert {run["golden_path"] for run in list_runs(db)} == {"golden/mini.yaml"}
    assert main(["gate", "--report", str(project / "second.json"), "--baseline", "last-green", "--db", str(db)]) == 0
    assert "nothing to gate" not in capsys.readouterr().out
    assert main(["drift", "--db", str(db), "--golden", "./golden/mini.yaml"]) == 0
    assert "no complete behaviour runs" not in capsys.readouterr().out


def _schema_3_store(path: Path, golden_paths: list[str]) -> None:
    """A store as evalcore wrote it before golden identities: schema 3, one green run per spelling."""
    with duckdb.connect(str(path)) as connection:
        migrate_to(connection, 3)
        for index, golden_path in enumerate(golden_paths):
            report = {"kind": "behaviour", "runId": f"run-{index}", "golden": {"path": golden_path, "hash": "h", "cases": 2}}
            connection.execute(
                "INSERT INTO behaviour_runs (run_id, started_at, finished_at, status, run_date, golden_path, golden_hash, server_target, "
                "server_fingerprint, server_tools_json, models_json, runs, config_json, passed, report_json, evalcore_version) "
                "VALUES (?, ?, ?, 'complete', ?, ?, 'h', 'reference', 'fp', '[]', '[\"sim/lexical\"]', 1, '{}', true, ?, '0.1.0')",
                [f"run-{index}", datetime(2026, 11, 1 + index, tzinfo=UTC), datetime(2026, 11, 1 + index, tzinfo=UTC), date(2026, 11, 1 + index),
                 golden_path, json.dumps(report)],
            )  # fmt: skip


def test_a_store_holding_both_spellings_migrates_to_one(project):
    db = project / "old.duckdb"
    _schema_3_store(db, ["golden/mini.yaml", str(project / "golden" / "mini.yaml"), "./golden/mini.yaml", "golden/gone.yaml"])
    with connect(db) as connection:  # a writing connection migrates
        (version,) = connection.execute("SELECT max(version) FROM schema_version").fetchone()  # type: ignore[misc]
        paths = dict(connection.execute("SELECT run_id, golden_path FROM behaviour_runs").fetchall())
        reports = {
            run_id: json.loads(text)["golden"]["path"] for run_id, text in connection.execute("SELECT run_id, report_json FROM behaviour_runs").fetchall()
        }
    assert version == SCHEMA_VERSION
    assert paths == {"run-0": "golden/mini.yaml", "run-1": "golden/mini.yaml", "run-2": "golden/mini.yaml", "run-3": "golden/gone.yaml"}
    assert reports == paths
    baseline = last_green_report(db, golden_path="golden/mini.yaml")
    assert baseline is not None and baseline["runId"] == "run-2"  # the newest of the three spellings, now one history
