"""What a run holds in memory per finished attempt: once the store has acknowledged an attempt, the runner keeps only
what the report reads of it (no transcript, no texts, scores shared), and the report is the same as of the whole records."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evalcore.behaviour import runner
from evalcore.behaviour.report import build_report, report_view
from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
from evalcore.golden.loader import load_golden_set
from evalcore.golden.model import GoldenSet
from evalcore.mcp.target import Target
from evalcore.models.types import ModelSpec
from evalcore.records import AttemptRecord, MetricSet
from evalcore.scoring.metrics import MetricAttempt, run_metrics
from evalcore.store import behaviour as store
from evalcore.store import db
from evalcore.store.behaviour import load_attempt_records, load_run
from evalcore.store.exchanges import load_exchanges
from tests.builders import GOLDEN, STEADY


def _report_and_sets(run: Mapping[str, Any], golden: GoldenSet, records: Sequence[AttemptRecord], models: Sequence[ModelSpec]) -> tuple[Any, Any]:
    report, metric_sets = build_report(run, golden, records, models)
    return report.to_json(), sorted((m.scope, m.model, m.case_id, sorted(m.values.items())) for m in metric_sets)


def test_a_stored_attempt_is_held_without_its_transcript_and_the_report_is_unchanged(tmp_path: Path, reference_url: str, monkeypatch) -> None:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    model = ModelSpec(f"sim/script:{tmp_path / 'script.yaml'}")
    # batch_size 1: each attempt is stored as it finishes, so every one is acknowledged before the run ends
    config = BehaviourConfig(tmp_path / "tasks.yaml", (model,), tmp_path / "evals.duckdb", runs=5, batch_size=1)
    held: dict[str, Any] = {}
    finish = runner.finish

    def finishing(config: BehaviourConfig, run: Mapping[str, Any], golden: GoldenSet, records: Sequence[AttemptRecord]) -> Any:
        held.update(run=dict(run), golden=golden, records=list(records))
        return finish(config, run, golden, records)

    monkeypatch.setattr(runner, "finish", finishing)
    report = asyncio.run(run_behaviour(config, Target(url=reference_url)))

    records: list[AttemptRecord] = held["records"]
    stored = load_attempt_records(config.db_path, report.run_id)
    assert len(records) == len(stored) == 15
    # What the runner held of each attempt: the per-call telemetry of its transcript, no messages, calls or texts.
    for record in records:
        assert set(json.loads(record.transcript_json)) <= {"turns", "executions", "retries"}
        assert record.tool_calls == () and record.final_text is None
    assert any(json.loads(record.transcript_json)["executions"] for record in records)  # the telemetry is still there
    # Equal scores (the same case's attempts that went alike) are one object: a score is not held once per attempt.
    assert len({id(record.score) for record in records}) == len({record.score for record in records})
    # The store has every attempt whole, and the run's recording, written batch by batch, is complete and in order.
    assert all("messages" in json.loads(record.transcript_json) and record.final_text is not None for record in stored if record.stop_reason == "final")
    exchanges = load_exchanges(config.db_path, report.run_id)
    assert [exchange.sequence for exchange in exchanges] == list(range(1, len(exchanges) + 1))
    assert sum(exchange.method == "tools/call" for exchange in exchanges) == sum(len(record.tool_calls) for record in stored)
    # The report of what was held is the report of the whole records, figure for figure.
    models = config.models
    assert _report_and_sets(held["run"], held["golden"], records, models) == _report_and_sets(held["run"], held["golden"], stored, models)
    assert replace(report, gate=None).to_json() == build_report(held["run"], held["golden"], stored, models)[0].to_json()


def test_the_report_of_report_views_is_the_report_of_the_whole_records_faults_included(tmp_path: Path, reference_url: str) -> None:
    """A run too short to store a batch before its end holds its records whole; their report views, faulted tool calls
    and failed-call retries included, still give the report of the whole records."""
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    config = BehaviourConfig(tmp_path / "tasks.yaml", (ModelSpec(f"sim/script:{tmp_path / 'script.yaml'}"),), tmp_path / "evals.duckdb", runs=5)
    report = asyncio.run(run_behaviour(config, Target(url=reference_url)))
    run, golden = load_run(config.db_path, report.run_id), load_golden_set(config.golden_path)
    records = [_faulted(record, n) for n, record in enumerate(load_attempt_records(config.db_path, report.run_id))]
    interned: dict[Any, Any] = {}
    views = [report_view(record, interned) for record in records]
    assert all(len(view.transcript_json) < len(record.transcript_json) for view, record in zip(views, records, strict=True))
    assert _report_and_sets(run, golden, views, config.models) == _report_and_sets(run, golden, records, config.models)
    assert any(tool["faults"] for tool in build_report(run, golden, views, config.models)[0].to_json()["toolCalls"])


def _faulted(record: AttemptRecord, n: int) -> AttemptRecord:
    """The record with a fault on each executed call and retries on every other one, as a faulted run records them."""
    transcript = json.loads(record.transcript_json)
    for execution in transcript["executions"]:
        execution.update(fault="timeout" if n % 2 else "error", request_ids=[*execution["request_ids"], "retry-1"] if n % 3 == 0 else execution["request_ids"])
    transcript["retries"] = n % 2
    return replace(record, transcript_json=json.dumps(transcript))


def test_the_report_text_is_built_a_case_at_a_time_and_is_the_text_of_the_whole_report(tmp_path: Path, reference_url: str, monkeypatch) -> None:
    """What the store keeps and `--out` writes is `json.dumps(report.to_json())` to the character, secrets removed, though
    it is serialised a case at a time (`RunReport.json_text`): a model with no case and an indented file included."""
    planted = "sk-planted-report-secret-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", planted)
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    config = BehaviourConfig(tmp_path / "tasks.yaml", (ModelSpec(f"sim/script:{tmp_path / 'script.yaml'}"),), tmp_path / "evals.duckdb", runs=5)
    report = asyncio.run(run_behaviour(config, Target(url=reference_url)))
    assert load_run(config.db_path, report.run_id)["report_json"] == json.dumps(report.to_json())
    model = report.models[0]
    leaky = replace(model.cases[0], failing_reasons=((f"the model echoed {planted}", 2), *model.cases[0].failing_reasons))
    variants = [report, replace(report, models=(replace(model, cases=(leaky, *model.cases[1:])), replace(model, model="sim/idle", cases=())))]
    for variant in variants:
        for indent in (None, 2):
            text = variant.json_text(indent)
            assert text == json.dumps(variant.to_json(), indent=indent) == "".join(variant.json_pieces(indent))
            assert planted not in text
    assert "[redacted:OPENAI_API_KEY]" in variants[1].json_text()


def test_serialising_a_large_report_never_holds_it_whole(tmp_path: Path, reference_url: str) -> None:
    """A report of many cases is serialised a case at a time: at most about twice its text is held while it is built,
    where building the JSON-ready value first (`json.dumps(report.to_json())`) held several times the text."""
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    config = BehaviourConfig(tmp_path / "tasks.yaml", (ModelSpec(f"sim/script:{tmp_path / 'script.yaml'}"),), tmp_path / "evals.duckdb", runs=5)
    report = asyncio.run(run_behaviour(config, Target(url=reference_url)))
    model = report.models[0]
    cases = tuple(replace(case, id=f"{case.id}-{n}") for n in range(300) for case in model.cases)  # 900 cases
    large = replace(report, models=(replace(model, cases=cases),))
    expected = json.dumps(large.to_json())
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        whole = json.dumps(large.to_json())
        held_whole = tracemalloc.get_traced_memory()[1] - before
        del whole
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        text = large.json_text()
        held = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert text == expected
    assert held < 2.5 * len(text) < held_whole, (held, len(text), held_whole)


def test_a_run_s_metrics_go_to_the_store_chunk_by_chunk_and_read_back_in_their_order(tmp_path: Path, reference_url: str, monkeypatch) -> None:
    """The run's metric values (some 200,000 at 2,000 cases) are bound a chunk of rows at a time, never all in one
    statement; what the store gives back is every set the run computed, value for value, in the order it was computed."""
    monkeypatch.setattr(db, "INSERT_CHUNK", 7)  # a few hundred metric values: dozens of chunks
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    config = BehaviourConfig(tmp_path / "tasks.yaml", (ModelSpec(f"sim/script:{tmp_path / 'script.yaml'}"),), tmp_path / "evals.duckdb", runs=5)
    statements: list[int] = []
    execute = db._RedactingConnection.execute

    def counted(self: Any, query: str, parameters: object = None) -> Any:
        if query.startswith("INSERT INTO run_metrics"):
            statements.append(len(parameters[0]))  # type: ignore[index]
        return execute(self, query, parameters)

    monkeypatch.setattr(db._RedactingConnection, "execute", counted)
    handed: list[MetricSet] = []
    finish_run = store.finish_run

    def finishing(path: Path, report: Any, metric_sets: Sequence[MetricSet]) -> None:
        handed.extend(metric_sets)
        finish_run(path, report, metric_sets)

    monkeypatch.setattr(store, "finish_run", finishing)
    report = asyncio.run(run_behaviour(config, Target(url=reference_url)))
    rows = [(m.scope, m.model, m.case_id, list(m.values.items())) for m in handed]
    assert [(m.scope, m.model, m.case_id, list(m.values.items())) for m in store.load_metrics(config.db_path, report.run_id)] == rows
    computed = run_metrics([MetricAttempt.of(record) for record in load_attempt_records(config.db_path, report.run_id)], config.runs)
    assert sorted(rows) == sorted((m.scope, m.model, m.case_id, list(m.values.items())) for m in computed)  # the one metrics function's
    assert len(statements) > 10 and max(statements) == 7 and sum(statements) == sum(len(m.values) for m in handed)


def test_the_runner_lets_its_attempts_go_once_the_report_is_built(tmp_path: Path, reference_url: str, monkeypatch) -> None:
    """The list of attempts the runner hands `finish` is emptied once the report is built, before the run's last writes
    (the metrics and the report), so those writes do not come on top of every attempt the run held."""
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    config = BehaviourConfig(tmp_path / "tasks.yaml", (ModelSpec(f"sim/script:{tmp_path / 'script.yaml'}"),), tmp_path / "evals.duckdb", runs=5)
    handed: list[Sequence[AttemptRecord]] = []
    held_at_write: list[int] = []
    finish, finish_run = runner.finish, store.finish_run

    def finishing(config: BehaviourConfig, run: Mapping[str, Any], golden: GoldenSet, records: Sequence[AttemptRecord]) -> Any:
        handed.append(records)
        return finish(config, run, golden, records)

    def writing(path: Path, report: Any, metric_sets: Sequence[MetricSet]) -> None:
        held_at_write.append(len(handed[0]))
        finish_run(path, report, metric_sets)

    monkeypatch.setattr(runner, "finish", finishing)
    monkeypatch.setattr(store, "finish_run", writing)
    report = asyncio.run(run_behaviour(config, Target(url=reference_url)))
    assert held_at_write == [0] and list(handed[0]) == []
    assert sum(case["attempts"] for model in report.to_json()["models"] for case in model["cases"]) == 15  # the report has them all


def test_the_run_writes_its_metrics_and_its_end_each_in_an_open_of_the_store_of_its_own(tmp_path: Path, reference_url: str, monkeypatch) -> None:
    """DuckDB keeps what a transaction wrote until the store closes: the runner holds no open of the store when it writes
    the run's end, and the metrics and the report each get their own, so the two are never held at once."""
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    config = BehaviourConfig(tmp_path / "tasks.yaml", (ModelSpec(f"sim/script:{tmp_path / 'script.yaml'}"),), tmp_path / "evals.duckdb", runs=5)
    held_by_caller: list[int] = []
    opens: list[bool] = []
    open_store, finish_run = db._open, store.finish_run

    def counting(path: Path, read_only: bool) -> Any:
        opens.append(read_only)
        return open_store(path, read_only)

    def writing(path: Path, report: Any, metric_sets: Sequence[MetricSet]) -> None:
        held_by_caller.append(len(db._HELD))
        opens.clear()
        finish_run(path, report, metric_sets)
        statuses.append(load_run(path, report.run_id)["status"])

    statuses: list[str] = []
    monkeypatch.setattr(db, "_open", counting)
    monkeypatch.setattr(store, "finish_run", writing)
    report = asyncio.run(run_behaviour(config, Target(url=reference_url)))
    assert held_by_caller == [0]
    assert opens[:2] == [False, False]  # the metrics, then the end: two writers' opens (the status read after is the third)
    assert statuses == ["complete"] and len(store.load_metrics(config.db_path, report.run_id)) > 0
