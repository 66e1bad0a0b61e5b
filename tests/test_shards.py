"""Scale-out: `run --shard I/K` in parallel processes, then `merge`, gives the unsharded run's store rows and report,
and a recording that `run --replay-run` replays.

Scripted `sim/script` models make every attempt deterministic, so a run split over K shards and merged must store
and report exactly what one unsharded run does, for K = 1 and 3, errored attempts (a provider error scripted for
one attempt of each model) included. A replay of the merged run serves the shards' recordings: the same tool catalog,
and every call found (a call the recording lacked would be an errored attempt), so it stores what the merged run does,
but for the target it names (the replayed run) and its config's `replay_of`.

Fields that differ between any two runs are left out of the comparison, and only they: ids (the run id, the drift
summary's `latestRun`, which is it, and the JSON-RPC `request_ids` of tool calls, a counter of each client whose order
follows scheduling), timestamps (`startedAt`, `recorded_at`, the run's
`started_at`/`finished_at`/`heartbeat_at`/`pid`, the config's `started`) and durations (every latency: an attempt's
`latency_ms`, the transcript's `*_ms`, the `latency_*` metrics and call stats). Retries are left out too (an attempt's
`retries`, the call stats' `retries`): a tool call re-issued after its stream was cut, or a model call retried, is
what the machine's load did to the transport, not what the model did; the re-issued call's answer is what every score
reads. The merged run's config also says how many shards it was run as (`shards`), which an unsharded run's does not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import MISSING, fields, replace
from pathlib import Path
from typing import Any

import pytest

from evalcore.behaviour.shards import FILE_FORMAT, FILE_VERSION, INDEX_VARIABLE, Shard, parse_shard, shard_of
from evalcore.cli import main
from evalcore.errors import ConfigError, StoreError
from evalcore.records import AttemptRecord, AttemptScore, JudgeVerdict, RecordedExchange, RobustnessScore, Score, ToolCall
from evalcore.store.db import connect
from evalcore.store.exchanges import load_exchanges
from evalcore.store.shard_file import ShardContents, read_shard_file, write_shard_file
from tests.builders import GOLDEN, STEADY, WRONG

ROOT = Path(__file__).resolve().parents[1]
COUNTS = (1, 3)
DATE = "2026-12-01"  # every shard of a plan stands for one date (the sim models read it)
# Each model's script with one attempt failing like a provider that refuses the call (400: no retry): an errored attempt.
STEADY_ERRORED = STEADY.replace("      5: {calls: [{name: get_customer", "      2: {error: 400}\n      5: {calls: [{name: get_customer")
WRONG_ERRORED = WRONG.replace('    text: "It is cloudy."\n', '    text: "It is cloudy."\n    attempts: {4: {error: {status: 400, message: no such model}}}\n')


def _read(path: Path) -> ShardContents:
    return read_shard_file(path, file_format=FILE_FORMAT, version=FILE_VERSION)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory, reference_url):
    """One unsharded run, and the same plan run as K shards (every shard its own `python -m evalcore run` process, all
    K = 1 and 3 at once) and merged: the folder, the unsharded run's report, and each K's shard folder and report."""
    workspace = tmp_path_factory.mktemp("shards")
    inputs = workspace / "inputs"
    inputs.mkdir()
    (inputs / "tasks.yaml").write_text(GOLDEN)
    assert STEADY_ERRORED != STEADY and WRONG_ERRORED != WRONG
    (inputs / "steady.yaml").write_text(STEADY_ERRORED)
    (inputs / "wrong.yaml").write_text(WRONG_ERRORED)
    plan = ["--golden", str(inputs / "tasks.yaml"), "--models", f"sim/script:{inputs / 'steady.yaml'},sim/script:{inputs / 'wrong.yaml'}"]
    plan += ["--url", reference_url, "--date", DATE, "--max-error-rate", "0.1"]
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
            if key not in {"runId", "runKind", "startedAt", "latestRun", "started", "request_ids", "retries"}
            and "latency" not in key
            and not key.endswith("_ms")
        }
    if isinstance(value, list):
        return [_without_durations(item) for item in value]
    return value


def _only_run(db: Path) -> str:
    with connect(db, read_only=True) as connection:
        (run_id,) = connection.execute("SELECT run_id FROM behaviour_runs").fetchone()
    return str(run_id)


def _rows(db: Path, run_id: str | None = None) -> dict[str, Any]:
    """The store's rows of a run (its one run by default), ids, timestamps and durations left out."""
    run_id = run_id or _only_run(db)
    with connect(db, read_only=True) as connection:
        run_cursor = connection.execute(
            "SELECT status, run_date, golden_path, golden_hash, server_target, server_name, server_fingerprint, server_tools_json, models_json, runs, "
            "passed, error, report_json, config_json FROM behaviour_runs WHERE run_id = ?",
            [run_id],
        )
        run = dict(zip([d[0] for d in run_cursor.description], run_cursor.fetchone(), strict=True))
        cursor = connection.execute(
            "SELECT * EXCLUDE (run_id, recorded_at, latency_ms, retries) FROM attempts WHERE run_id = ? ORDER BY model, case_id, attempt", [run_id]
        )
        names = [d[0] for d in cursor.description]
        attempts = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        scores = connection.execute(
            "SELECT * EXCLUDE (run_id) FROM attempt_scores WHERE run_id = ? ORDER BY model, case_id, attempt, scorer", [run_id]
        ).fetchall()
        metrics = connection.execute(
            "SELECT scope, model, case_id, metric, value FROM run_metrics WHERE run_id = ? AND metric NOT LIKE '%latency%' AND metric <> 'retries' "
            "ORDER BY scope, model, case_id, metric",
            [run_id],
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
    assert (merged[count]["runKind"], one["runKind"]) == ("merged", "run")
    assert _without_durations(merged[count]) == _without_durations(one)
    unsharded, joined = _rows(workspace / "one.duckdb"), _rows(workspace / f"merged-{count}.duckdb")
    assert len(joined["attempts"]) == 30 and joined["metrics"] and joined["scores"]
    errored = [(a["model"].rsplit("/", 1)[-1], a["case_id"], a["attempt"], a["error_kind"]) for a in joined["attempts"] if a["error_kind"]]
    assert errored == [("steady.yaml", "customer-then-ticket", 2, "provider"), ("wrong.yaml", "say-hello", 4, "provider")]
    assert joined == unsharded


def _calls(db: Path) -> list[tuple[str, str | None, str | None]]:
    """A store's recorded tool calls of its one run, as (params, answer, failure), sorted (their order is scheduling's)."""
    recorded = load_exchanges(db, _only_run(db), "tools/call")
    return sorted((json.dumps(e.params, sort_keys=True), json.dumps(e.answer, sort_keys=True), e.failure) for e in recorded)


@pytest.mark.parametrize("count", COUNTS)
def test_a_merged_run_holds_every_shards_recording_and_its_replay_stores_what_it_does(sharded, count, tmp_path):
    workspace, _, merged = sharded
    db = workspace / f"merged-{count}.duckdb"
    exchanges = load_exchanges(db, _only_run(db))
    in_files = sum(len(_read(path).exchanges) for path in (workspace / f"k{count}").glob("*.parquet"))
    assert [e.sequence for e in exchanges] == list(range(1, in_files + 1))  # every shard's, numbered on
    assert sum(e.method == "tools/list" for e in exchanges) == count  # each shard listed the tools once
    assert _calls(db) == _calls(workspace / "one.duckdb") != []  # the calls the unsharded run recorded, each once

    replayed = tmp_path / "replayed.duckdb"  # a copy: the merged store keeps its one run for the other tests
    shutil.copy(db, replayed)
    inputs = workspace / "inputs"
    argv = ["run", "--golden", str(inputs / "tasks.yaml"), "--models", f"sim/script:{inputs / 'steady.yaml'},sim/script:{inputs / 'wrong.yaml'}"]
    argv += ["--date", DATE, "--max-error-rate", "0.1", "--db", str(replayed), "--replay-run", merged[count]["runId"], "--out", str(tmp_path / "r.json")]
    assert main(argv) == 1  # not green: the same case gates missed
    replay_id = json.loads((tmp_path / "r.json").read_text())["runId"]
    original, replay = _rows(replayed, merged[count]["runId"]), _rows(replayed, replay_id)
    assert replay["run"].pop("server_target") == f"replay of run {merged[count]['runId']}"
    assert replay["run"]["config"].pop("replay_of") == merged[count]["runId"]
    original["run"].pop("server_target")
    original["run"]["config"].pop("shards", None)
    for report in (original["run"]["report_json"], replay["run"]["report_json"]):
        report["server"].pop("target")  # the replay names the run it serves
    # The gate says what each run may become: a replay never a baseline, the merged run one once its case gates are met.
    assert replay["run"]["report_json"]["gate"].pop("reason").endswith("never a baseline: replay of a recording")
    assert original["run"]["report_json"]["gate"].pop("reason").endswith("`evalcore baseline accept RUN_ID` makes a run the baseline by hand")
    assert replay["run"]["server_fingerprint"] == original["run"]["server_fingerprint"]  # the same tool catalog
    assert [a["error_kind"] for a in replay["attempts"]].count("replay") == 0  # every call was in the recording
    assert replay == original


def test_the_shards_split_the_attempts_and_write_nothing_but_their_files(sharded):
    workspace, _, _ = sharded
    assert list((workspace / "runner").iterdir()) == []  # no store, no report in the shards' working directory
    counts = []
    for path in sorted((workspace / "k3").iterdir()):
        contents = _read(path)
        identity, records = contents.identity, contents.records
        assert identity["shard"] == int(path.name.split("-")[2]) and identity["plan"]["shards"] == 3
        assert identity["version"] == FILE_VERSION and identity["exchanges"] == len(contents.exchanges) > 0
        assert all(shard_of(r.model, r.case_id, r.attempt, 3) == identity["shard"] for r in records)
        counts.append(len(records))
    assert sum(counts) == 30 and len(counts) == 3


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
    (whole,) = (workspace / "k1").glob("*.parquet")  # the one shard of the same run split K = 1 ways
    db = tmp_path / "refused.duckdb"

    assert "missing" in _refused(three[:2], db, capsys) and "2/3" in _refused(three[:2], db, capsys)

    twice = tmp_path / "copy.parquet"
    shutil.copy(three[1], twice)
    line = _refused([*three, twice], db, capsys)
    assert str(twice) in line and "again" in line

    line = _refused([*three[:2], whole], db, capsys)
    assert str(whole) in line and "another plan" in line and "shards" in line

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
    """An attempt whose every field differs from its default (so a field the file dropped would show)."""
    score = AttemptScore(
        (Score("selection", 1.0, True), Score("robustness", 0.0, True, ("gave up", "said nothing of it"), "honest_error"), Score("judge", None, False)),
        False,
        ("gave up", "said nothing of it"),
    )
    record = AttemptRecord(
        model="sim/lexical",
        case_id="weather-paris",
        attempt=2,
        case_hash="abc",
        case_kind="hard",
        simulated=True,
        model_version="v1",
        score=score,
        tool_calls=(ToolCall("c1", "get_weather", {"city": "Paris"}), ToolCall("c2", "get_weather", {}, '{"city": "Par', False)),
        final_text="Cloudy.",
        stop_reason="final",
        error=None,
        latency_ms=12.5,
        input_tokens=100,
        output_tokens=20,
        cost_usd=0.25,
        retries=1,
        transcript_json='{"messages": []}',
        judge=JudgeVerdict(True, 0.9, "fine", "sim/judge"),
        cached_from="20261201-000000-abcdef",
        robustness=RobustnessScore("timeout", "honest_error", None, None, False, ("gave up", "said nothing of it")),
        error_kind="judge",
    )
    return replace(record, **changes)


def _errored(**changes: Any) -> AttemptRecord:
    """An attempt errored by its provider, as the runner records one: no score at all, its reason, no final text."""
    reason = "provider error: sim/wrong.yaml: no such model"
    errored: dict[str, Any] = {
        "score": AttemptScore((), False, (reason,)),
        "tool_calls": (),
        "final_text": None,
        "stop_reason": "model_error",
        "error": "sim/wrong.yaml: no such model",
        "latency_ms": None,
        "input_tokens": None,
        "output_tokens": None,
        "cost_usd": None,
        "retries": 0,
        "judge": None,
        "cached_from": None,
        "robustness": None,
        "error_kind": "provider",
    }
    return replace(_record(), **{**errored, **changes})


EXCHANGES = (
    RecordedExchange(1, "tools/list", {}, {"result": {"tools": [{"name": "get_weather"}]}}, None, "0af7651916cd43dd8448eb211c80319c"),
    RecordedExchange(2, "tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}}, {"error": {"code": -32603, "message": "down"}}),
    RecordedExchange(3, "tools/call", {"name": "get_weather", "arguments": {"city": "Lyon"}}, None, "timeout: no answer in 30 s"),
)


def test_a_shard_file_keeps_every_attempt_whole_errored_or_not_and_its_exchanges_and_is_never_replaced(tmp_path):
    record = _record()
    assert all(getattr(record, f.name) != f.default for f in fields(AttemptRecord) if f.default is not MISSING)  # a dropped field shows
    records = [record, _errored(), _errored(attempt=3, error_kind="replay", stop_reason="final", tool_calls=record.tool_calls)]
    path = tmp_path / "s.parquet"
    identity = {"format": FILE_FORMAT, "version": FILE_VERSION, "attempts": 3, "exchanges": 3}
    write_shard_file(path, identity, records, EXCHANGES)
    assert _read(path) == ShardContents(identity, tuple(records), EXCHANGES)  # every field, an errored attempt's too
    with pytest.raises(StoreError, match="never replaced"):
        write_shard_file(path, {**identity, "attempts": 0, "exchanges": 0}, [])
    assert _read(path).records == tuple(records)
    assert [p.name for p in tmp_path.iterdir()] == ["s.parquet"]  # no temporary file left
    empty = tmp_path / "empty.parquet"
    write_shard_file(empty, {**identity, "attempts": 0, "exchanges": 0}, [])  # a shard the hash gave no attempt
    assert _read(empty) == ShardContents({**identity, "attempts": 0, "exchanges": 0}, (), ())


def test_merge_refuses_a_shard_file_of_another_version_in_one_line(sharded, tmp_path, capsys):
    """A file of version 1 (no exchanges, no reasons per score; its columns laid out otherwise) is named and refused."""
    workspace, _, _ = sharded
    (current,) = (workspace / "k1").glob("*.parquet")
    old = tmp_path / current.name
    identity = {**_read(current).identity, "version": 1}
    identity.pop("exchanges")
    with connect(tmp_path / "scratch.duckdb") as connection:  # the v1 layout: today's columns but those version 2 added
        connection.execute(
            "COPY (SELECT * EXCLUDE (robustness_reasons_json, sequence, method, params_json, answer_json, failure, conversation) "
            "REPLACE (CASE WHEN kind = 'plan' THEN ? ELSE plan_json END AS plan_json) FROM read_parquet(?) WHERE kind <> 'exchange') TO ? (FORMAT parquet)",
            [json.dumps(identity), str(current), str(old)],
        )
    with pytest.raises(StoreError, match="of version 1"):
        _read(old)
    line = _refused([old], tmp_path / "refused.duckdb", capsys)
    assert str(old) in line and "version 1" in line and f"reads version {FILE_VERSION}" in line and "run every shard of the plan again" in line
