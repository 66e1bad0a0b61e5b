"""Scale-out: `run --shard I/K` in parallel processes, then `merge`, gives the unsharded run's store rows and report.

Scripted `sim/script` models make every attempt deterministic, so a run split over K shards and merged must store
and report exactly what one unsharded run does, for K = 1, 3 and 7. Fields that differ between any two runs are left
out of the comparison, and only they: ids (the run id, the drift summary's `latestRun`, which is it, and the JSON-RPC
`request_ids` of tool calls, a counter of each client whose order follows scheduling), timestamps
(`startedAt`, `recorded_at`, the run's `started_at`/`finished_at`/`heartbeat_at`/`pid`, the config's `started`) and
durations (every latency: an attempt's `latency_ms`, the transcript's `*_ms`, the `latency_*` metrics and call stats).
Retries are left out too (an attempt's `retries`, the call stats' `retries`): a tool call re-issued after its stream
was cut, or a model call retried, is what the machine's load did to the transport, not what the model did; the
re-issued call's answer is what every score reads. The merged run's config also says how many shards it was run as
(`shards`), which an unsharded run's does not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evalcore.behaviour.shards import INDEX_VARIABLE, Shard, parse_shard, shard_of
from evalcore.cli import main
from evalcore.errors import ConfigError, StoreError
from evalcore.records import AttemptRecord, AttemptScore, JudgeVerdict, RobustnessScore, Score, ToolCall
from evalcore.store.db import connect
from evalcore.store.shard_file import read_shard_file, write_shard_file
from tests.builders import GOLDEN, STEADY, WRONG

ROOT = Path(__file__).resolve().parents[1]
COUNTS = (1, 3, 7)
DATE = "2026-12-01"  # every shard of a plan stands for one date (the sim models read it)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory, reference_url):
    """One unsharded run, and the same plan run as K shards (every shard its own `python -m evalcore run` process, all
    K = 1, 3 and 7 at once) and merged: the folder, the unsharded run's report, and each K's shard folder and report."""
    workspace = tmp_path_factory.mktemp("shards")
    inputs = workspace / "inputs"
    inputs.mkdir()
    (inputs / "tasks.yaml").write_text(GOLDEN)
    (inputs / "steady.yaml").write_text(STEADY)
    (inputs / "wrong.yaml").write_text(WRONG)
    plan = ["--golden", str(inputs / "tasks.yaml"), "--models", f"sim/script:{inputs / 'steady.yaml'},sim/script:{inputs / 'wrong.yaml'}"]
    plan += ["--url", reference_url, "--date", DATE]
    assert main(["run", *plan, "--db", str(workspace / "one.duckdb"), "--out", str(workspace / "one.json")]) == 1  # not green: case gates missed

    runner = workspace / "runner"  # the shards' working directory: it must stay empty (a shard writes no store)
    runner.mkdir()
    processes = []
    for count in COUNTS:
        for index in range(count):
            log = (workspace / f"shard-{index}-of-{count}.log").open("w")
            command = [sys.executable, "-m", "evalcore", "run", *plan, "--shard", f"{index}/{count}", "--shard-dir", str(workspace / f"k{count}")]
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            processes.append((subprocess.Popen(command, cwd=runner, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env), log))
    for process, log in processes:
        code = process.wait(timeout=600)  # a net for a hang, not a bound
        log.close()
        assert code == 0, Path(log.name).read_text()
    merged = {}
    for count in COUNTS:
        files = sorted((workspace / f"k{count}").glob("*.parquet"))
        assert len(files) == count
        out = workspace / f"merged-{count}.json"
        assert main(["merge", *map(str, files), "--db", str(workspace / f"merged-{count}.duckdb"), "--out", str(out)]) == 1
        merged[count] = json.loads(out.read_text())
    return workspace, json.loads((workspace / "one.json").read_text()), merged


def _without_durations(value: Any) -> Any:
    """`value` without what differs between any two runs: ids, timestamps and durations (see the module docstring)."""
    if isinstance(value, dict):
        return {
            key: _without_durations(item)
            for key, item in value.items()
            if key not in {"runId", "startedAt", "latestRun", "started", "request_ids", "retries"} and "latency" not in key and not key.endswith("_ms")
        }
    if isinstance(value, list):
        return [_without_durations(item) for item in value]
    return value


def _rows(db: Path) -> dict[str, Any]:
    """The store's rows of its one run, ids, timestamps and durations left out."""
    with connect(db, read_only=True) as connection:
        (run_id,) = connection.execute("SELECT run_id FROM behaviour_runs").fetchone()
        run_cursor = connection.execute(
            "SELECT status, run_date, golden_path, golden_hash, server_target, server_name, server_fingerprint, server_tools_json, models_json, runs, "
            "passed, error, report_json, config_json FROM behaviour_runs"
        )
        run = dict(zip([d[0] for d in run_cursor.description], run_cursor.fetchone(), strict=True))
        cursor = connection.execute(
            "SELECT * EXCLUDE (run_id, recorded_at, latency_ms, retries) FROM attempts WHERE run_id = ? ORDER BY model, case_id, attempt", [run_id]
        )
        names = [d[0] for d in cursor.description]
        attempts = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        scores = connection.execute("SELECT * EXCLUDE (run_id) FROM attempt_scores ORDER BY model, case_id, attempt, scorer").fetchall()
        metrics = connection.execute(
            "SELECT scope, model, case_id, metric, value FROM run_metrics WHERE metric NOT LIKE '%latency%' AND metric <> 'retries' "
            "ORDER BY scope, model, case_id, metric"
        ).fetchall()
    for attempt in attempts:
        attempt["transcript_json"] = _without_durations(json.loads(attempt["transcript_json"]))
    run["report_json"] = _without_durations(json.loads(run["report_json"]))
    config = json.loads(run.pop("config_json"))
    run["config"] = {key: value for key, value in config.items() if key not in {"started", "shards"}}
    return {"run": run, "attempts": attempts, "scores": scores, "metrics": metrics}


@pytest.mark.parametrize("count", COUNTS)
def test_a_merged_sharded_run_reports_and_stores_what_the_unsharded_run_does(sharded, count):
    workspace, one, merged = sharded
    assert len(one["models"]) == 2 and sum(case["attempts"] for model in one["models"] for case in model["cases"]) == 30
    assert merged[count]["runId"] != one["runId"]
    assert _without_durations(merged[count]) == _without_durations(one)
    unsharded, joined = _rows(workspace / "one.duckdb"), _rows(workspace / f"merged-{count}.duckdb")
    assert len(joined["attempts"]) == 30 and joined["metrics"] and joined["scores"]
    assert joined == unsharded


def test_the_shards_split_the_attempts_and_write_nothing_but_their_files(sharded):
    workspace, _, _ = sharded
    assert list((workspace / "runner").iterdir()) == []  # no store, no report in the shards' working directory
    counts = []
    for path in sorted((workspace / "k7").iterdir()):
        identity, records = read_shard_file(path)
        assert identity["shard"] == int(path.name.split("-")[2]) and identity["plan"]["shards"] == 7
        assert all(shard_of(r.model, r.case_id, r.attempt, 7) == identity["shard"] for r in records)
        counts.append(len(records))
    assert sum(counts) == 30 and len(counts) == 7


def test_shard_of_is_the_sha256_of_model_case_and_attempt_and_partitions_the_attempts():
    import hashlib

    digest = hashlib.sha256(b'["sim/lexical","weather-paris",3]').digest()
    assert shard_of("sim/lexical", "weather-paris", 3, 5) == int.from_bytes(digest[:8], "big") % 5
    items = [(model, f"case-{n}", attempt) for model in ("a", "b") for n in range(40) for attempt in range(1, 6)]
    shards = [Shard(index, 7) for index in range(7)]
    owners = [[shard.index for shard in shards if shard.holds(*item)] for item in items]
    assert all(len(found) == 1 for found in owners)
    assert {found[0] for found in owners} == set(range(7))  # every shard gets work


def test_shard_auto_reads_the_kubernetes_completion_index():
    assert parse_shard("2/4") == Shard(2, 4)
    assert parse_shard("auto/4", {INDEX_VARIABLE: "3"}) == Shard(3, 4)
    with pytest.raises(ConfigError, match="JOB_COMPLETION_INDEX, which is not set"):
        parse_shard("auto/4", {})
    with pytest.raises(ConfigError, match="not a shard index from 0 to 3"):
        parse_shard("auto/4", {INDEX_VARIABLE: "4"})
    for wrong in ("4/4", "-1/4", "1/0", "1", "a/b"):
        with pytest.raises(ConfigError):
            parse_shard(wrong)


def test_run_refuses_a_shard_it_cannot_place_with_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(INDEX_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--shard", "auto/3", "--shard-dir", "shards"]) == 2
    assert main(["run", "--shard", "1/3"]) == 2
    assert main(["run", "--shard", "1/3", "--shard-dir", "shards", "--out", "r.json"]) == 2
    assert main(["run", "--shard", "1/3", "--shard-dir", "shards", "--replay-run", "some-run"]) == 2  # a merge would lose replay_of
    errors = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in errors] == ["error"] * 4
    assert "JOB_COMPLETION_INDEX" in errors[0] and "--shard-dir" in errors[1] and "--out" in errors[2] and "--replay-run" in errors[3]
    assert list(tmp_path.iterdir()) == []


def _refused(files: list[Path], db: Path, capsys, *options: str) -> str:
    capsys.readouterr()
    assert main(["merge", *map(str, files), "--db", str(db), *options]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert not db.exists()  # nothing stored
    return line


def test_merge_refuses_what_is_not_one_whole_plan_and_stores_nothing(sharded, tmp_path, capsys):
    workspace, _, _ = sharded
    three = sorted((workspace / "k3").glob("*.parquet"))
    seven = sorted((workspace / "k7").glob("*.parquet"))
    db = tmp_path / "refused.duckdb"

    assert "missing" in _refused(three[:2], db, capsys) and "2/3" in _refused(three[:2], db, capsys)

    twice = tmp_path / "copy.parquet"
    shutil.copy(three[1], twice)
    line = _refused([*three, twice], db, capsys)
    assert str(twice) in line and "again" in line

    line = _refused([*three[:2], seven[2]], db, capsys)
    assert str(seven[2]) in line and "another plan" in line and "shards" in line

    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(three[2].read_bytes()[: three[2].stat().st_size // 2])
    line = _refused([*three[:2], truncated], db, capsys)
    assert str(truncated) in line and "truncated or corrupt" in line

    line = _refused([*three[:2], tmp_path / "absent.parquet"], db, capsys)
    assert "absent.parquet" in line

    changed = tmp_path / "tasks.yaml"
    changed.write_text(GOLDEN.replace("What's the weather in Paris?", "Weather in Paris, please."))
    line = _refused(three, db, capsys, "--golden", str(changed))
    assert str(changed) in line and "not the golden set the shards ran" in line


def test_merge_refuses_shards_of_another_plan_with_the_same_count(sharded, reference_url, tmp_path, capsys):
    """A shard run with other options (here --runs 2) is another plan, even with the same K."""
    workspace, _, _ = sharded
    inputs = workspace / "inputs"
    other = tmp_path / "other"
    argv = ["run", "--golden", str(inputs / "tasks.yaml"), "--models", f"sim/script:{inputs / 'steady.yaml'},sim/script:{inputs / 'wrong.yaml'}"]
    argv += ["--url", reference_url, "--date", DATE, "--runs", "2", "--shard", "0/3", "--shard-dir", str(other)]
    assert main(argv) == 0
    (stray,) = other.glob("*.parquet")
    three = sorted((workspace / "k3").glob("*.parquet"))
    line = _refused([stray, *three[1:]], tmp_path / "refused.duckdb", capsys)
    assert str(three[1]) in line and "another plan" in line and "runs" in line


def _record(**changes: Any) -> AttemptRecord:
    score = AttemptScore((Score("selection", 1.0, True), Score("robustness", 0.0, True, ("gave up",), "honest_error")), False, ("gave up",))
    record = AttemptRecord(
        model="sim/lexical",
        case_id="weather-paris",
        attempt=2,
        case_hash="abc",
        case_kind="hard",
        simulated=True,
        model_version="v1",
        score=score,
        tool_calls=(ToolCall("c1", "get_weather", {"city": "Paris"}),),
        final_text="Cloudy.",
        stop_reason="final",
        error=None,
        latency_ms=12.5,
        input_tokens=100,
        output_tokens=20,
        cost_usd=None,
        retries=1,
        transcript_json='{"messages": []}',
        judge=JudgeVerdict(True, 0.9, "fine", "sim/judge"),
        robustness=RobustnessScore("timeout", "honest_error", None, None, False),
    )
    return replace(record, **changes)


def test_a_shard_file_keeps_attempts_as_the_store_does_and_is_never_replaced(tmp_path):
    path = tmp_path / "s.parquet"
    record = _record()
    write_shard_file(path, {"format": "evalcore-shard", "attempts": 1}, [record])
    identity, (read,) = read_shard_file(path)
    assert identity == {"format": "evalcore-shard", "attempts": 1}
    assert read == replace(record, robustness=replace(record.robustness, reasons=()))  # the store keeps its reasons in the attempt's
    with pytest.raises(StoreError, match="never replaced"):
        write_shard_file(path, {"attempts": 0}, [])
    assert read_shard_file(path)[1] == [read]
    assert [p.name for p in tmp_path.iterdir()] == ["s.parquet"]  # no temporary file left
    empty = tmp_path / "empty.parquet"
    write_shard_file(empty, {"attempts": 0}, [])  # a shard the hash gave no attempt
    assert read_shard_file(empty) == ({"attempts": 0}, [])
