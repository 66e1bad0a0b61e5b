"""Every kind of run through every consumer: one store holding a run, merged shards, both arms of `compare`, a perturbed
arm of `perturb` and a replay, all made by the CLI against the real reference server; then the cache, the baseline
finder, `baseline accept`, the Matrix's default scope, the drift history and resume are each asked about every run,
and their answers must be `evalcore.run_kinds.eligibility`'s, which docs/metrics.md's table states."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from evalcore.behaviour.history import run_points
from evalcore.behaviour.plan import RunPlan
from evalcore.behaviour.runner import BehaviourConfig, resumed_config
from evalcore.cli import main
from evalcore.dashboard import queries, widgets
from evalcore.golden.loader import load_golden_set
from evalcore.models.types import ModelSpec
from evalcore.run_kinds import RUN_KINDS, RunOutcome, eligibility
from evalcore.store.behaviour import last_green_report, list_runs, load_attempts, load_run
from tests.builders import GOLDEN, STEADY, migrate_to

ROOT = Path(__file__).resolve().parents[1]

# STEADY at --runs 2 gets every case right (its slips are on attempts 3 and 5): the plain run is green, so it is the
# baseline a consumer must find.
GREEN = STEADY
# Asks for Lyon: a replay of the green run has no such call recorded, so those attempts are errored (not in recording).
LYON = STEADY.replace("city: Paris", "city: Lyon")
# A case `evalcore draft` wrote and nobody reviewed: graded only under --include-drafts, in a run of kind draft-run.
DRAFT_CASE = """\
  - id: draft-weather
    prompt: "Weather in Paris, please."
    expect_tool: get_weather
    expect_args: {city: Paris}
    review: {status: draft, by: sim/drafter, at: "2026-12-05", checked: schema}
"""
OVERRIDES = """\
tools:
  get_weather:
    description: "Weather somewhere."
"""


@dataclass(frozen=True)
class KindStore:
    db: Path
    workspace: Path
    runs: dict[str, str]  # run id -> kind
    green_model: str

    def ids(self, *kinds: str) -> set[str]:
        """The store's runs of these kinds now (a test may have added one, e.g. a cached run)."""
        return {str(run["run_id"]) for run in list_runs(self.db) if run["kind"] in kinds}


def _run(workspace: Path, *argv: str) -> int:
    return main([*argv, "--db", str(workspace / "evals.duckdb")])


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory, reference_url: str) -> KindStore:
    workspace = tmp_path_factory.mktemp("kinds")
    (workspace / "tasks.yaml").write_text(GOLDEN)
    (workspace / "green.yaml").write_text(GREEN)
    (workspace / "lyon.yaml").write_text(LYON)
    (workspace / "overrides.yaml").write_text(OVERRIDES)
    green = f"sim/script:{workspace / 'green.yaml'}"
    common = ("--golden", str(workspace / "tasks.yaml"), "--runs", "2")
    assert _run(workspace, "run", *common, "--models", green, "--url", reference_url, "--out", str(workspace / "run.json")) == 0
    plain = json.loads((workspace / "run.json").read_text())["runId"]
    shard_dir = workspace / "shards"
    assert main(["run", *common, "--models", green, "--url", reference_url, "--shard", "0/1", "--shard-dir", str(shard_dir)]) == 0
    assert _run(workspace, "merge", *map(str, shard_dir.glob("*.parquet")), "--out", str(workspace / "merged.json")) in (0, 1)
    compare = ("compare", *common, "--models", green, "--url", reference_url, "--candidate-tools", str(workspace / "overrides.yaml"))
    assert _run(workspace, *compare, "--json", str(workspace / "compare.json")) in (0, 1)
    perturb = ("perturb", *common, "--models", green, "--url", reference_url, "--perturbations", "distractors")
    assert _run(workspace, *perturb, "--json", str(workspace / "perturb.json")) in (0, 1)
    (workspace / "drafts.yaml").write_text(GOLDEN + DRAFT_CASE)
    drafts = ("run", "--golden", str(workspace / "drafts.yaml"), "--runs", "2", "--models", green, "--url", reference_url, "--include-drafts")
    assert _run(workspace, *drafts, "--out", str(workspace / "draft.json")) in (0, 1)
    lyon = f"sim/script:{workspace / 'lyon.yaml'}"
    assert _run(workspace, "run", *common, "--models", lyon, "--replay-run", plain, "--out", str(workspace / "replay.json")) == 1
    db = workspace / "evals.duckdb"
    runs = {str(run["run_id"]): str(run["kind"]) for run in list_runs(db)}
    assert runs[plain] == "run"
    return KindStore(db, workspace, runs, green)


def test_every_kind_is_made_and_stored_with_its_plan(kinds: KindStore) -> None:
    assert set(kinds.runs.values()) == set(RUN_KINDS)
    for run_id, kind in kinds.runs.items():
        plan = RunPlan.from_json(json.loads(load_run(kinds.db, run_id)["plan_json"]))
        assert plan.kind == kind
        assert (plan.replay_of is not None) == (kind == "replay")
        assert bool(plan.catalog.tools or plan.catalog.distractors or plan.catalog.order) == (kind in ("compare-candidate", "perturb-arm"))


def test_the_cache_serves_only_the_kinds_eligibility_allows(kinds: KindStore, reference_url: str) -> None:
    # The arms and the replay ran after the run and the merge, with the same model and cases: the newest attempt for a
    # key would win, so only eligibility keeps them out. A compare baseline arm has the very same inputs as the run.
    workspace = kinds.workspace
    argv = ("run", "--golden", str(workspace / "tasks.yaml"), "--runs", "2", "--models", kinds.green_model, "--url", reference_url, "--cache")
    assert _run(workspace, *argv, "--out", str(workspace / "cached.json")) == 0
    cached = load_attempts(kinds.db, json.loads((workspace / "cached.json").read_text())["runId"])
    sources = {row["cached_from"] for row in cached}
    allowed = {run_id for run_id, kind in kinds.runs.items() if eligibility(kind, RunOutcome("complete", green=True)).cache_source}
    assert None not in sources and sources <= allowed and sources


def test_the_baseline_is_only_a_kind_that_may_be_one_and_accept_refuses_the_rest(kinds: KindStore, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = last_green_report(kinds.db)
    assert baseline is not None and load_run(kinds.db, baseline["runId"])["kind"] in ("run", "merged")
    for run_id, kind in kinds.runs.items():
        report = json.loads(load_run(kinds.db, run_id)["report_json"])
        may = eligibility(kind, RunOutcome("complete", green=True)).baseline
        assert report["runKind"] == kind
        if not may:
            assert not report["gate"]["green"] and "becomes the baseline" not in report["gate"]["reason"]
            capsys.readouterr()
            assert main(["baseline", "accept", run_id, "--db", str(kinds.db)]) == 2
            assert "cannot be a baseline" in capsys.readouterr().err


def test_the_matrix_and_drift_show_only_kinds_that_stand_for_the_server(kinds: KindStore) -> None:
    standing = kinds.ids(*(kind for kind in RUN_KINDS if eligibility(kind, RunOutcome("complete", green=True)).matrix_current))
    picked = queries.picked_runs(kinds.db)
    assert picked and set(picked.values()) <= standing
    assert set(queries.matrix(kinds.db)["run_id"]) <= standing
    drifting = {point.run_id for point in run_points(kinds.db)}
    assert drifting and drifting <= kinds.ids(*(kind for kind in RUN_KINDS if eligibility(kind, RunOutcome("complete", green=True)).drift))
    # Picked by id, an arm still opens in the matrix, which says what it is.
    arm = next(iter(kinds.ids("compare-candidate")))
    assert set(queries.matrix(kinds.db, queries.AttemptFilters(run_id=arm))["run_id"]) == {arm}
    notes = widgets.run_state_notes(queries.run_list(kinds.db), [arm, *picked.values()])
    assert notes == [("warning", f"Run {arm} is a compare: candidate arm: it measured something other than the server as it is, and is never a baseline.")]


def test_the_runs_list_and_cli_name_each_kind_and_one_status(kinds: KindStore, capsys: pytest.CaptureFixture[str]) -> None:
    listed = queries.run_list(kinds.db).set_index("run_id")
    assert set(listed["kind"]) == {
        "run",
        "merged shards",
        "compare: baseline arm",
        "compare: candidate arm",
        "perturb: perturbed arm",
        "replay of a recording",
        "run with draft cases",
    }
    capsys.readouterr()
    assert main(["runs", "--db", str(kinds.db)]) == 0
    out = capsys.readouterr().out
    for run_id in kinds.runs:
        line = next(line for line in out.splitlines() if line.startswith(run_id))
        assert listed.loc[run_id, "status"] in line  # the CLI and the Runs page say the same status
    assert not re.search(r"\bcomplete\b", out.split("\n", 1)[1])  # a finished run reads its status, not the store's word


def test_resume_restores_the_kind_and_the_catalog_of_an_arm(kinds: KindStore, reference_url: str) -> None:
    arm = next(iter(kinds.ids("perturb-arm")))
    plan = RunPlan.from_json(json.loads(load_run(kinds.db, arm)["plan_json"]))
    assert plan.catalog.distractors
    _crash(kinds.db, arm)
    # What the resume will run with: the stored plan, not the command line (which names another model and no catalog).
    workspace = kinds.workspace
    given = BehaviourConfig(workspace / "tasks.yaml", (ModelSpec("sim/lexical"),), kinds.db, runs=5)
    golden = load_golden_set(workspace / "tasks.yaml")
    _, config = resumed_config(given, arm, golden, plan.server_fingerprint)
    assert (config.kind, config.catalog, config.models, config.runs) == (plan.kind, plan.catalog, plan.models, plan.runs)
    argv = ("run", "--golden", str(workspace / "tasks.yaml"), "--models", "sim/lexical", "--url", reference_url, "--resume", arm)
    assert _run(workspace, *argv, "--out", str(workspace / "resumed-arm.json")) in (0, 1)
    resumed = json.loads((workspace / "resumed-arm.json").read_text())
    assert resumed["runKind"] == "perturb-arm" and {m["model"] for m in resumed["models"]} == {kinds.green_model}
    assert not resumed["gate"]["green"] and len(load_attempts(kinds.db, arm)) == 6
    assert arm not in set(queries.picked_runs(kinds.db).values())


def test_resuming_a_replay_serves_the_recording_not_the_live_server(kinds: KindStore, capsys: pytest.CaptureFixture[str]) -> None:
    replay = next(iter(kinds.ids("replay")))
    _crash(kinds.db, replay)
    workspace = kinds.workspace
    argv = ("run", "--golden", str(workspace / "tasks.yaml"), "--models", f"sim/script:{workspace / 'lyon.yaml'}", "--resume", replay)
    assert _run(workspace, *argv, "--url", "http://127.0.0.1:9/mcp") == 2  # a replay takes no server
    assert "is a replay of run" in capsys.readouterr().err
    assert _run(workspace, *argv, "--out", str(workspace / "resumed-replay.json")) == 1
    resumed = json.loads((workspace / "resumed-replay.json").read_text())
    assert resumed["runKind"] == "replay"
    # The live server would have answered the Lyon call; the recording has none, so the rerun attempts error again.
    lyon = [row for row in load_attempts(kinds.db, replay) if row["case_id"] == "weather-paris"]
    assert lyon and all(row["error_kind"] == "replay" and "not in recording" in row["reasons_json"] for row in lyon)


# What each phrase of the table's cells says, as a predicate of the run's outcome.
PHRASES = {
    "no": lambda outcome: False,
    "yes": lambda outcome: True,
    "yes, if complete": lambda outcome: outcome.status == "complete",
    "yes, if complete, green or accepted, and no attempt errored": lambda outcome: (
        outcome.status == "complete" and (outcome.green or outcome.accepted) and outcome.errored == 0 and outcome.unscored_cases == 0
    ),
}
OUTCOMES = [
    RunOutcome(status, green=green, accepted=accepted, errored=errored)
    for status in ("complete", "running", "crashed", "failed", "cancelled")
    for green in (False, True)
    for accepted in (False, True)
    for errored in (0, 2)
]


def test_docs_metrics_table_is_the_eligibility_function() -> None:
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    section = text[text.index("## Eligibility") :]
    section = section[: section.index("\n## ", 1)]
    table = {}
    for row in (line for line in section.splitlines() if line.startswith("| `")):
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        table[cells[0].strip("`")] = [re.sub(r"\s*\(.*\)$", "", cell) for cell in cells[1:5]]
    assert set(table) == set(RUN_KINDS)
    fields = ("cache_source", "baseline", "drift", "matrix_current")
    for kind, cells in table.items():
        for field, cell in zip(fields, cells, strict=True):
            assert cell in PHRASES, f"docs/metrics.md: {kind}: unknown cell {cell!r}"
            for outcome in OUTCOMES:
                assert getattr(eligibility(kind, outcome), field) == PHRASES[cell](outcome), (kind, field, outcome)


def _crash(db: Path, run_id: str) -> None:
    """What a killed run leaves: status running under a dead pid, one attempt per model not stored."""
    with duckdb.connect(str(db)) as connection:
        connection.execute("UPDATE behaviour_runs SET status = 'running', pid = 999999999, report_json = NULL WHERE run_id = ?", [run_id])
        connection.execute("DELETE FROM attempt_scores WHERE run_id = ? AND case_id = 'weather-paris' AND attempt = 1", [run_id])
        connection.execute("DELETE FROM attempts WHERE run_id = ? AND case_id = 'weather-paris' AND attempt = 1", [run_id])
        connection.execute("DELETE FROM run_metrics WHERE run_id = ?", [run_id])
        connection.execute("DELETE FROM case_cells WHERE run_id = ?", [run_id])


def test_an_edited_golden_set_is_not_gated_against_the_old_content(tmp_path: Path, reference_url: str) -> None:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "green.yaml").write_text(GREEN)
    argv = ("run", "--golden", str(tmp_path / "tasks.yaml"), "--models", f"sim/script:{tmp_path / 'green.yaml'}", "--url", reference_url, "--runs", "1")
    assert _run(tmp_path, *argv, "--out", str(tmp_path / "first.json")) == 0
    first = json.loads((tmp_path / "first.json").read_text())["runId"]
    (tmp_path / "tasks.yaml").write_text(GOLDEN.replace("Hi there!", "Hello, anyone there?"))
    assert _run(tmp_path, *argv, "--out", str(tmp_path / "second.json")) == 0
    gate = json.loads((tmp_path / "second.json").read_text())["gate"]
    assert gate["status"] == "no_baseline" and gate["baselineRunId"] is None
    assert any(f"changed since baseline run {first}" in note for note in gate["notes"])


def test_a_model_is_one_column_however_its_script_path_is_spelt(tmp_path: Path, reference_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "green.yaml").write_text(GREEN)
    monkeypatch.chdir(tmp_path)
    for spelling in ("sim/script:green.yaml", "sim/script:./green.yaml", f"sim/script:{tmp_path / 'green.yaml'}"):
        assert _run(tmp_path, "run", "--golden", "tasks.yaml", "--models", spelling, "--url", reference_url, "--runs", "1") == 0
    models = {json.dumps(json.loads(run["models_json"])) for run in list_runs(tmp_path / "evals.duckdb")}
    assert models == {json.dumps([f"sim/script:{(tmp_path / 'green.yaml').resolve().as_posix()}"])}
    assert len(queries.picked_runs(tmp_path / "evals.duckdb")) == 1


def test_a_store_written_before_run_kinds_is_read_with_each_run_s_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Schema 13: an arm and a replay known only by their config's markers; `evalcore runs` and `drift` migrate it first."""
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as connection:
        migrate_to(connection, 13)
        for run_id, config in (("plain", {}), ("arm", {"comparison_arm": "candidate"}), ("replayed", {"replay_of": "plain"})):
            connection.execute(
                "INSERT INTO behaviour_runs (run_id, started_at, status, run_date, golden_path, golden_hash, server_target, server_fingerprint, "
                "server_tools_json, models_json, runs, config_json, evalcore_version) "
                "VALUES (?, now(), 'complete', current_date, 'g.yaml', 'h', 't', 'fp', '[]', '[\"m\"]', 1, ?, '0')",
                [run_id, json.dumps(config)],
            )
    assert main(["runs", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    kinds = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert "compare: candidate arm" in kinds["arm"] and "replay of a recording" in kinds["replayed"] and " run " in kinds["plain"]
    assert {run["run_id"]: run["kind"] for run in list_runs(db)} == {"plain": "run", "arm": "compare-candidate", "replayed": "replay"}
    assert main(["drift", "--db", str(db)]) == 0
