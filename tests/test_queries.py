"""The dashboard's store queries, on a store recorded by real `evalcore run`s of scripted sim models against the reference server."""

from __future__ import annotations

from datetime import date

import duckdb
import pandas as pd
import pytest

from evalcore.dashboard import queries
from evalcore.dashboard.queries import AttemptFilters
from tests.builders import Store, build_store


@pytest.fixture(scope="module")
def store(tmp_path_factory, reference_url) -> Store:
    return build_store(tmp_path_factory.mktemp("dashboard-store"), reference_url)


def _cell(frame, model: str, case_id: str):
    rows = frame[(frame["model"] == model) & (frame["case_id"] == case_id)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_matrix_has_one_row_per_model_and_case_of_the_newest_run(store):
    matrix = queries.matrix(store.db)
    assert len(matrix) == 6 and set(matrix["run_id"]) == {store.run_id}
    weather = _cell(matrix, store.steady, "weather-paris")
    assert (weather["passes"], weather["runs"], weather["pass_rate"], weather["pass_hat_k"]) == (4, 5, 0.8, 0.0)
    assert weather["kind"] == "hard" and "Lyon" in weather["top_failing_reason"] and bool(weather["simulated"])
    hello = _cell(matrix, store.steady, "say-hello")
    assert (hello["passes"], hello["pass_hat_k"]) == (5, 1.0) and hello["top_failing_reason"] is None
    assert _cell(matrix, store.wrong, "say-hello")["passes"] == 0


def test_matrix_filters(store):
    assert set(queries.matrix(store.db, AttemptFilters(models=(store.wrong,)))["model"]) == {store.wrong}
    assert set(queries.matrix(store.db, AttemptFilters(kinds=("hard",)))["case_id"]) == {"weather-paris"}
    old = queries.matrix(store.db, AttemptFilters(run_id=store.old_run_id))
    assert set(old["model"]) == {store.steady} and set(old["run_id"]) == {store.old_run_id}
    january = queries.matrix(store.db, AttemptFilters(date_to=date(2026, 1, 31)))
    assert set(january["run_id"]) == {store.old_run_id}
    assert queries.matrix(store.db, AttemptFilters(date_from=date(2027, 1, 1))).empty
    assert queries.matrix(store.db, AttemptFilters(golden_path="elsewhere.yaml")).empty
    assert len(queries.matrix(store.db, AttemptFilters(golden_path=str(store.golden)))) == 6
    (server,) = queries.filter_options(store.db)["servers"]  # the name the reference server gives in server/discover
    assert server.startswith("evalcore") and len(queries.matrix(store.db, AttemptFilters(server=server))) == 6
    assert queries.matrix(store.db, AttemptFilters(server="another server")).empty


def test_the_matrix_reads_a_finished_runs_stored_cells_and_they_equal_its_attempts(store, tmp_path):
    """A finished run stores its matrix cells; a store without them (older, or a model's cells missing) reads the
    same matrix from the attempts, frame for frame, whatever the filters; so does a run resumed since (running again),
    whatever its stored cells say."""
    with duckdb.connect(str(store.db), read_only=True) as connection:
        stored = connection.execute("SELECT run_id, count(*) FROM case_cells GROUP BY run_id ORDER BY run_id").fetchall()
    assert sorted(stored) == sorted([(store.run_id, 6), (store.old_run_id, 3)])
    scopes = [AttemptFilters(), AttemptFilters(kinds=("hard",)), AttemptFilters(run_id=store.old_run_id), AttemptFilters(models=(store.wrong,))]
    expected = [queries.matrix(store.db, filters) for filters in scopes]
    resumed = "UPDATE case_cells SET passes = 99, top_failing_reason = 'stale'; UPDATE behaviour_runs SET status = 'running'"
    for index, forget in enumerate((f"DELETE FROM case_cells WHERE model = '{store.steady}'", "DELETE FROM case_cells", "DROP TABLE case_cells", resumed)):
        copy = tmp_path / f"{index}.duckdb"
        copy.write_bytes(store.db.read_bytes())
        with duckdb.connect(str(copy)) as connection:
            connection.execute(forget)
        for filters, frame in zip(scopes, expected, strict=True):
            pd.testing.assert_frame_equal(queries.matrix(copy, filters), frame)


def test_latest_run_ids_pick_each_models_newest_run_by_date(store):
    latest = queries.latest_run_ids(store.db).set_index("model")
    assert latest.loc[store.steady, "run_id"] == store.run_id and latest.loc[store.wrong, "run_id"] == store.run_id
    only_january = queries.latest_run_ids(store.db, AttemptFilters(date_to=date(2026, 1, 1)))
    assert list(only_january["run_id"]) == [store.old_run_id]


def test_model_summary_matches_the_report_metrics(store):
    summary = queries.model_summary(store.db).set_index("model")
    steady = summary.loc[store.steady]
    assert steady["attempts"] == 15 and steady["selection_accuracy"] == 1.0
    assert steady["argument_accuracy"] == pytest.approx(9 / 10)
    assert steady["sequence_accuracy"] == pytest.approx(0.8) and steady["over_call_rate"] == 0.0
    wrong = summary.loc[store.wrong]
    assert wrong["over_call_rate"] == 1.0 and wrong["pass_rate"] == pytest.approx(5 / 15)
    assert wrong["cost_usd"] == 0.0 and wrong["cost_per_correct_usd"] == 0.0


def test_latency_tokens_and_cost_per_model_tool_and_day(store):
    per_model = queries.latency(store.db).set_index("model")
    assert per_model.loc[store.steady, "attempts"] == 30  # both runs
    # scripted 200 ms: a floor the model's time never goes under; no upper bound, which a busy machine would break
    assert per_model.loc[store.wrong, "latency_p50_ms"] >= 200
    assert per_model.loc[store.wrong, "latency_p95_ms"] >= per_model.loc[store.wrong, "latency_p50_ms"]
    assert per_model.loc[store.wrong, "input_tokens_per_attempt"] > per_model.loc[store.steady, "input_tokens_per_attempt"]
    assert per_model.loc[store.wrong, "tokens_per_correct"] > per_model.loc[store.wrong, "input_tokens_per_attempt"]
    tools = queries.tool_latency(store.db).set_index("tool")
    # get_weather: steady 5 calls per run x 2 runs, wrong 10 (weather and say-hello)
    assert tools.loc["get_weather", "calls"] == 20
    assert tools.loc["get_weather", "error_rate"] == pytest.approx(7 / 20)  # Lyon has no weather: 2 steady + 5 wrong
    assert set(tools.index) == {"get_weather", "get_customer", "create_support_ticket"}
    assert tools["retries"].sum() == 0 and tools["faulted_calls"].sum() == 0  # nothing cut, nothing injected
    per_call = queries.model_call_latency(store.db).set_index("model")
    assert per_call.loc[store.wrong, "calls"] > per_model.loc[store.wrong, "attempts"]  # a tool call costs a second model call
    assert per_call.loc[store.wrong, "latency_p50_ms"] >= 200
    assert per_call.loc[store.wrong, "input_tokens_per_call"] == 300 and per_call.loc[store.wrong, "retries"] == 0
    over_time = queries.latency_over_time(store.db)
    assert [(str(d.date()), m) for d, m in zip(over_time["run_date"], over_time["model"], strict=True)] == [
        ("2026-01-01", store.steady),
        ("2026-02-01", store.steady),
        ("2026-02-01", store.wrong),
    ]


def test_flaky_cases_are_pairs_mixed_within_a_run_ranked_by_within_run_inconsistency(store):
    flaky = queries.flaky_cases(store.db)
    pairs = list(zip(flaky["model"], flaky["case_id"], strict=True))
    assert set(pairs) == {(store.steady, "weather-paris"), (store.steady, "customer-then-ticket")}
    weather = _cell(flaky, store.steady, "weather-paris")
    assert (weather["passes"], weather["runs"], weather["flaky_runs"], weather["failing_runs"], weather["run_count"]) == (8, 10, 2, 2, 2)
    assert weather["flakiness"] == pytest.approx(0.4) and weather["last_run_id"] == store.run_id  # 4/5 in each run: 1 - |1.6 - 1|
    runs = queries.pair_runs(store.db, store.steady, "weather-paris")
    assert list(runs["run_id"]) == [store.run_id, store.old_run_id] and list(runs["passes"]) == [4, 4] and all(runs["flaky"])


def test_attempts_drill_down_carries_prompt_calls_results_and_telemetry(store):
    rows = queries.attempts(store.db, store.run_id, store.steady, "weather-paris")
    assert list(rows["attempt"]) == [1, 2, 3, 4, 5]
    assert set(rows["prompt"]) == {"What's the weather in Paris?"}
    third = rows.iloc[2]
    assert not third["passed"] and "Lyon" in third["tool_calls"] and "Lyon" in third["tool_results"] and "Lyon" in third["reasons"]
    assert rows.iloc[0]["final_text"] == "Cloudy in Paris." and rows.iloc[0]["input_tokens"] > 0
    assert queries.attempts(store.db, store.run_id, store.steady, "no-such-case").empty


def test_export_as_frame_and_parquet(store):
    frame = queries.attempts_frame(store.db)
    assert len(frame) == 45 and "transcript_json" not in frame.columns
    assert len(queries.attempts_frame(store.db, AttemptFilters(models=(store.wrong,)))) == 15
    parquet = queries.attempts_parquet(store.db, AttemptFilters(models=(store.wrong,)))
    assert parquet[:4] == b"PAR1"
    target = store.db.parent / "check.parquet"
    target.write_bytes(parquet)
    assert duckdb.connect().execute("SELECT count(*) FROM read_parquet(?)", [str(target)]).fetchone() == (15,)
    csv = queries.attempts_export(store.db, AttemptFilters(models=(store.wrong,)), "csv").decode()
    assert csv.startswith("run_id,run_date,") and len(csv.strip().splitlines()) == 16
    assert queries.attempts_count(store.db, AttemptFilters(models=(store.wrong,))) == 15
    assert len(queries.attempts_frame(store.db, limit=7)) == 7
    assert {"fault", "robustness_outcome", "attack_attempted", "refused", "robustness_passed"} <= set(frame.columns)  # Layer 2 travels too


def test_booleans_are_spelled_one_way_in_every_csv(store):
    export = queries.attempts_export(store.db, AttemptFilters(models=(store.wrong,)), "csv").decode()
    header, first = export.splitlines()[:2]
    passed = dict(zip(header.split(","), first.split(","), strict=False))["passed"]
    table = queries.frame_csv(queries.attempts_frame(store.db, AttemptFilters(models=(store.wrong,))))
    summary = queries.frame_csv(queries.matrix(store.db))
    assert passed in ("true", "false")
    for text in (export, table, summary):
        assert ",True," not in text and ",False," not in text and ("true" in text or "false" in text)


def test_conformance_verdict_matches_the_server_by_fingerprint(store):
    runs = queries.conformance_runs(store.db)
    assert len(runs) == 1
    fingerprint = queries.matrix(store.db)["server_fingerprint"].iloc[0]
    verdict = queries.latest_conformance_verdict(store.db, "http://some-other-port/mcp", fingerprint)
    assert list(verdict["run_id"]) == list(runs["run_id"]) and verdict["checks"].iloc[0] > 0
    assert queries.latest_conformance_verdict(store.db, "http://nowhere/mcp", "no-such-fingerprint").empty
    assert len(queries.conformance_checks(store.db, runs["run_id"].iloc[0])) == verdict["checks"].iloc[0]


def test_missing_or_empty_store_gives_empty_frames(tmp_path):
    from evalcore.store.db import connect

    empty = tmp_path / "empty.duckdb"
    with connect(empty):
        pass  # the schema, no rows
    for db in (tmp_path / "missing.duckdb", empty):
        assert queries.matrix(db).empty and list(queries.matrix(db).columns) == list(queries.MATRIX_COLUMNS)
        for frame in (
            queries.model_summary(db),
            queries.latency(db),
            queries.latency_over_time(db),
            queries.tool_latency(db),
            queries.model_call_latency(db),
            queries.flaky_cases(db),
            queries.attempts(db, "r", "m", "c"),
            queries.attempts_frame(db),
            queries.runs(db),
            queries.conformance_runs(db),
            queries.latest_conformance_verdict(db),
            queries.latest_run_ids(db),
        ):
            assert frame.empty
        assert queries.filter_options(db)["models"] == []
    assert queries.attempts_parquet(tmp_path / "missing.duckdb") == b"" and queries.attempts_count(tmp_path / "missing.duckdb") == 0


def test_the_sidebars_options_take_one_open_of_the_store(store, monkeypatch):
    """Opening a store costs 15-40 ms of CPU: the options' three queries share one read-only connection, as does a
    query called inside another's `_reading`, and each reads what it reads alone."""
    opened = []
    real_connect = queries.connect

    def counting_connect(*args, **kwargs):
        opened.append(args)
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(queries, "connect", counting_connect)
    options = queries.filter_options(store.db)
    assert len(opened) == 1
    assert options["run_ids"] == list(queries.runs(store.db)["run_id"]) and len(opened) == 2
    assert options["golden_paths"] == list(queries.golden_sets(store.db)["golden_path"]) and len(opened) == 3


def test_layer0_checks_list_what_failed_first_and_the_unjudged_checks_last_without_counts(demo_db):
    db, _ = demo_db
    checks = queries.conformance_checks(db, str(queries.conformance_runs(db)["run_id"].iloc[0]))
    unjudged = checks["verdict"].isin(["not_applicable", "not_testable"])
    assert unjudged.any() and (~unjudged).any()
    assert list(unjudged) == sorted(unjudged)  # every judged check comes before the first unjudged one
    assert checks.loc[unjudged, "passes"].isna().all() and checks.loc[unjudged, "runs"].isna().all()  # not "Passes 0, Runs 5"
