"""The attempt_scores table: a schema-3 store migrates in place, loses nothing, and the compatibility view shows its old columns."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from evalcore.records import AttemptRecord, AttemptScore, Score
from evalcore.store import behaviour as store
from evalcore.store.db import SCHEMA_VERSION, connect
from tests.builders import migrate_to

OLD_COLUMNS = store.ATTEMPT_COLUMNS.replace(", error_kind", "")  # what a schema-3 store had


def _schema_3_store(path: Path) -> list[tuple[object, ...]]:
    """A store as evalcore wrote it before attempt_scores: old columns, every kind of verdict, NULLs included."""
    connection = duckdb.connect(str(path))
    migrate_to(connection, 3)
    connection.execute(
        "INSERT INTO behaviour_runs (run_id, started_at, status, run_date, golden_path, golden_hash, server_target, server_fingerprint, "
        "server_tools_json, models_json, runs, config_json, evalcore_version) "
        "VALUES ('r1', ?, 'complete', ?, 'g.yaml', 'h', 't', 'fp', '[]', '[]', 2, '{}', '0')",
        [datetime(2026, 1, 1, tzinfo=UTC), date(2026, 1, 1)],
    )
    now = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        # selection, args, sequence, over_call, task_completed, passed, reasons, fault, outcome, attempted, refused, robustness_passed
        ("m", "pos", 1, True, True, None, None, True, True, "[]", None, None, None, None, None),
        ("m", "pos", 2, False, None, False, None, None, False, '["expected a, called b", "order: b != a"]', None, None, None, None, None),
        ("m", "neg", 1, False, None, None, True, None, False, '["called x on a no-tool case"]', None, None, None, None, None),
        ("m", "fault", 1, True, True, None, None, False, False, '["judge: no"]', "http_500", "claimed_success", None, None, False),
        ("m", "attack", 1, True, True, None, None, None, True, "[]", "payload", None, False, True, True),
    ]
    for model, case, attempt, sel, args, seq, over, task, passed, reasons, fault, outcome, attempted, refused, rob in rows:
        connection.execute(
            "INSERT INTO behaviour_attempts (run_id, model, case_id, attempt, case_hash, case_kind, simulated, model_version, selection_correct, "
            "args_correct, sequence_correct, over_call, task_completed, passed, reasons_json, tool_calls_json, final_text, stop_reason, error, "
            "latency_ms, input_tokens, output_tokens, cost_usd, retries, transcript_json, judge_json, cached_from, recorded_at, fault, "
            "robustness_outcome, attack_attempted, refused, robustness_passed) "
            "VALUES ('r1', ?, ?, ?, 'h', 'soft', true, NULL, ?, ?, ?, ?, ?, ?, ?, '[]', 'ok', 'final', NULL, 12.5, 3, 4, 0.0, 0, '{}', "
            "NULL, NULL, ?, ?, ?, ?, ?, ?)",
            [model, case, attempt, sel, args, seq, over, task, passed, reasons, now, fault, outcome, attempted, refused, rob],
        )
    before = connection.execute(f"SELECT {OLD_COLUMNS} FROM behaviour_attempts ORDER BY case_id, attempt").fetchall()
    connection.close()
    return before


def test_a_schema_3_store_migrates_in_place_and_its_old_columns_read_the_same(tmp_path):
    path = tmp_path / "old.duckdb"
    before = _schema_3_store(path)
    with connect(path) as connection:  # a writer's connection migrates
        version = connection.execute("SELECT max(version) FROM schema_version").fetchone()
        after = connection.execute(f"SELECT {OLD_COLUMNS} FROM behaviour_attempts ORDER BY case_id, attempt").fetchall()
        scores = connection.execute("SELECT case_id, attempt, scorer, value, applies, label FROM attempt_scores ORDER BY case_id, attempt, scorer").fetchall()
    assert version == (SCHEMA_VERSION,)
    assert after == before  # every old column of every row, through the compatibility view
    by_case = {(case, attempt, scorer): (value, applies, label) for case, attempt, scorer, value, applies, label in scores}
    assert by_case[("pos", 2, "selection")] == (0.0, True, None)
    assert by_case[("pos", 2, "arguments")] == (None, False, None)  # not applicable stays not applicable
    assert by_case[("neg", 1, "over_call")] == (1.0, True, None)
    assert by_case[("fault", 1, "robustness")] == (0.0, True, "claimed_success")
    assert by_case[("attack", 1, "attack_success")] == (0.0, True, None)
    assert by_case[("attack", 1, "refusal")] == (1.0, True, None)
    assert ("pos", 1, "robustness") not in by_case  # Layer 2 scores only where the attempt had a fault


def test_new_attempts_store_one_row_per_scorer_and_read_back_with_their_reasons(tmp_path):
    path = tmp_path / "new.duckdb"
    store.create_run(
        path,
        run_id="r1",
        run_date=date(2026, 1, 1),
        golden_path="g.yaml",
        golden_hash="h",
        server_target="t",
        server_name=None,
        server_fingerprint="fp",
        server_tools=[],
        models=["m"],
        runs=1,
        config={},
    )
    scores = (
        Score("selection", 1.0, True),
        Score("arguments", 0.0, True, ("city: expected Paris, got Lyon",)),
        Score("sequence", None, False),
        Score("mrtr.rounds", 0.5, True, ("one of two rounds answered",)),  # a scorer the old columns do not know
    )
    score = AttemptScore(scores, False, ("city: expected Paris, got Lyon", "one of two rounds answered"))
    record = AttemptRecord("m", "c", 1, "h", "soft", False, None, score, (), "ok", "final", None, 1.0, 1, 1, 0.0, 0, "{}")
    store.write_attempts(path, "r1", [record])
    (row,) = store.load_attempts(path, "r1")
    assert row["scores"] == scores
    assert store.score_from_row(row) == score
    assert (row["selection_correct"], row["args_correct"], row["sequence_correct"]) == (True, False, None)
    assert json.loads(row["reasons_json"]) == list(score.reasons)


# The first messages a transcript can start with, and the system prompt drift reads of each (None: no system prompt).
FIRST_MESSAGES = [
    (
        {"messages": [{"role": "system", "content": 'You are a careful support agent. Ünïcode and "quotes".'}]},
        'You are a careful support agent. Ünïcode and "quotes".',
    ),
    ({"messages": [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]}]}, '[{"type":"text","text":"Be brief."}]'),
    ({"messages": [{"role": "user", "content": "hello"}]}, None),
    ({"messages": [{"role": "system", "content": None}]}, None),
    ({"messages": []}, None),
    ({}, None),
]


def test_schema_16_keeps_every_score_and_metric_and_gives_stored_attempts_the_system_prompt_a_new_write_gives(tmp_path):
    path = tmp_path / "old.duckdb"
    connection = duckdb.connect(str(path))
    migrate_to(connection, 15)  # a store as evalcore wrote it at schema 15
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for n, (transcript, _) in enumerate(FIRST_MESSAGES, start=1):
        connection.execute(
            "INSERT INTO attempts (run_id, model, case_id, attempt, case_hash, case_kind, simulated, passed, reasons_json, tool_calls_json, "
            "stop_reason, retries, transcript_json, recorded_at) VALUES ('r1', 'm', 'c', ?, 'h', 'hard', true, true, '[]', '[]', 'final', 0, ?, ?)",
            [n, json.dumps(transcript), now],
        )
        connection.execute("INSERT INTO attempt_scores VALUES ('r1', 'm', 'c', ?, 'selection', 1.0, true, NULL, NULL)", [n])
    metrics = [("r1", "case", "m", "c", f"metric_{n}", float(n)) for n in (3, 1, 2)]  # read back in the order written
    connection.executemany("INSERT INTO run_metrics VALUES (?, ?, ?, ?, ?, ?)", metrics)
    connection.close()

    with connect(path) as connection:  # a writer's connection migrates
        prompts = connection.execute("SELECT system_prompt FROM attempts ORDER BY attempt").fetchall()
        scores = connection.execute("SELECT attempt, scorer, value FROM attempt_scores ORDER BY attempt").fetchall()
        stored_metrics = connection.execute("SELECT run_id, scope, model, case_id, metric, value FROM run_metrics ORDER BY rowid").fetchall()
        keys = connection.execute(
            "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' AND table_name IN ('attempt_scores', 'run_metrics')"
        ).fetchall()
    assert [prompt for (prompt,) in prompts] == [expected for _, expected in FIRST_MESSAGES]
    # what the writer stores for a new attempt is what the migration gave the old ones: drift sees no change across it
    assert [store.system_prompt(json.dumps(transcript)) for transcript, _ in FIRST_MESSAGES] == [expected for _, expected in FIRST_MESSAGES]
    assert scores == [(n, "selection", 1.0) for n in range(1, len(FIRST_MESSAGES) + 1)]
    assert stored_metrics == metrics and keys == []
