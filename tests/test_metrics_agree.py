"""Every metric is computed once: a randomised run's report, gate, dashboard queries and exports agree to the last digit,
and the stored numbers equal a brute-force recomputation from the attempts (pass^k and pass@k by enumerating draws)."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import random
from dataclasses import replace
from datetime import date
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import jsonschema
import pandas as pd
import pytest

from evalcore.behaviour.report import build_report
from evalcore.dashboard import queries
from evalcore.dashboard.queries import AttemptFilters
from evalcore.errors import StoreError
from evalcore.golden.model import GoldenCase, GoldenSet
from evalcore.models.types import ModelSpec
from evalcore.records import DISTRACTOR, SCHEMA_VERSION, AttemptRecord, AttemptScore, Score
from evalcore.scoring.gate import compare_to_baseline, decide
from evalcore.scoring.registry import get, regression_metrics
from evalcore.store import behaviour as store

RUNS = 5
REPORT_SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "report.schema.json"
CASES = (
    GoldenCase("weather", "p", "get_weather", {"city": "Paris"}, kind="hard"),
    GoldenCase("invoice", "p", "get_invoice", {"invoice_id": "1"}),
    GoldenCase("billing", "p", None, expect_sequence=("get_customer", "search_invoices")),
    GoldenCase("hello", "p", None),
    GoldenCase("judged", "p", "search_knowledge_base", {"query": "refunds"}, rubric="cites the policy"),
)
MODELS = (ModelSpec("openai/priced-a"), ModelSpec("openai/unpriced-b"), ModelSpec("sim/free-c"))
DISTRACTOR_TOOL = "get_weather_v2"  # a decoy beside the server's get_weather: a call to it is never a server call


def _score(case: GoldenCase, rng: random.Random, errored: bool) -> AttemptScore:
    """Random verdicts that respect each scorer's applicability; passed by the registry's own gate rule."""
    if errored:
        return AttemptScore((), False, ("model error: 429 rate limited (gave up after 3 retries)",))
    scores = []
    selection = rng.random() < 0.75
    scores.append(Score("selection", float(selection), True, () if selection else ("wrong tool",)))
    if not case.is_negative and selection:
        correct = rng.random() < 0.8
        scores.append(Score("arguments", float(correct), True, () if correct else ("bad argument",)))
    else:
        scores.append(Score("arguments", None, False))
    if case.expect_sequence:
        ordered = rng.random() < 0.6
        scores.append(Score("sequence", float(ordered), True, () if ordered else ("wrong order",)))
    if case.is_negative:
        scores.append(Score("over_call", float(not selection), True))
    else:
        executed = rng.random() < 0.9
        scores.append(Score("execution", float(executed), True, () if executed else ("every tool call returned an error",)))
    if case.rubric and rng.random() < 0.8:
        completed = rng.random() < 0.7
        scores.append(Score("judge", float(completed), True, () if completed else ("judge: missed it",)))
    passed = all(get(score.scorer).passes(score) for score in scores)
    return AttemptScore(tuple(scores), passed, tuple(reason for score in scores for reason in score.reasons))


def _failed_by_server() -> AttemptScore:
    reason = "server error: the server failed before the model could run (see the attempt's error)"
    return AttemptScore((Score("execution", 0.0, True, (reason,)),), False, (reason,))


def _transcript(rng: random.Random, errored: bool, cost: float | None, distractor: bool = False) -> str:
    """Model turns and tool executions as the agent stores them, so the per-call and per-tool figures have data."""
    turns = [
        {
            "latency_ms": rng.uniform(1, 900),
            "input_tokens": rng.randint(1, 99),
            "output_tokens": rng.randint(1, 9),
            "cost_usd": cost,
            "retries": rng.choice((0, 1)),
        }
        for _ in range(rng.randint(0 if errored else 1, 3))
    ]
    executions = [
        {
            "tool": rng.choice(("get_weather", "get_invoice")),
            "is_error": rng.random() < 0.2,
            "latency_ms": rng.uniform(1, 90),
            "request_ids": [1] * rng.choice((1, 1, 2)),
            "fault": rng.choice((None, None, "http_500")),
        }
        for _ in range(rng.randint(0, 2))
    ]
    if distractor:  # the model called a decoy `evalcore perturb` listed: recorded as the agent does, never sent
        executions.append({"tool": DISTRACTOR_TOOL, "is_error": True, "latency_ms": 0.0, "request_ids": [], "error_type": DISTRACTOR, "fault": None})
    return json.dumps({"messages": [], "turns": turns, "executions": executions, "retries": 3 if errored else 0})


def _records(rng: random.Random) -> list[AttemptRecord]:
    records = []
    for spec in MODELS:
        for case in CASES:
            for attempt in range(1, RUNS + 1):
                errored = rng.random() < 0.15
                server_failed = not errored and rng.random() < 0.05  # the server failed first: a failure, never excluded
                if spec.name.endswith("unpriced-b"):
                    cost = None
                elif spec.simulated or errored:
                    cost = 0.0
                else:
                    cost = rng.randint(1, 9999) / 1_000_000
                records.append(
                    AttemptRecord(
                        model=spec.name,
                        case_id=case.id,
                        attempt=attempt,
                        case_hash=case.id,
                        case_kind=case.kind,
                        simulated=spec.simulated,
                        model_version="v1",
                        score=_failed_by_server() if server_failed else _score(case, rng, errored),
                        tool_calls=(),
                        final_text=None if errored or server_failed else "answer",
                        stop_reason="model_error" if errored else "server_error" if server_failed else "final",
                        error="429 rate limited (gave up after 3 retries)" if errored else None,
                        latency_ms=None if errored and rng.random() < 0.5 else rng.uniform(5, 3000),
                        input_tokens=rng.randint(10, 900),
                        output_tokens=rng.randint(1, 200),
                        cost_usd=cost,
                        error_kind="provider" if errored else None,
                        retries=3 if errored else rng.choice((0, 0, 1)),
                        transcript_json=_transcript(rng, errored, cost, distractor=case.id == "weather" and attempt == 1),
                    )
                )
    return records


@pytest.fixture(params=[11, 2026, 90210])
def randomised_run(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str, dict[str, Any], list[AttemptRecord]]:
    rng = random.Random(request.param)
    db = tmp_path / "evals.duckdb"
    store.create_run(
        db,
        run_id="r1",
        run_date=date(2026, 12, 1),
        golden_path="golden.yaml",
        golden_hash="g",
        server_target="http://127.0.0.1:1/mcp",
        server_name="srv",
        server_fingerprint="fp",
        server_tools=[],
        models=[m.name for m in MODELS],
        runs=RUNS,
        config={},
    )
    records = _records(rng)
    rng.shuffle(records)  # stored in finishing order, not case order
    store.write_attempts(db, "r1", records)
    report = _finish(db, "r1", records)
    return db, "r1", report, records


def _finish(db: Path, run_id: str, records: list[AttemptRecord]) -> dict[str, Any]:
    """What the runner does at a run's end: metrics once, the gated report, one write to the store."""
    golden = GoldenSet(Path("golden.yaml"), CASES, "g")
    report, metric_sets = build_report(store.load_run(db, run_id), golden, records, MODELS)
    gated = replace(report, gate=decide(report.to_json(), None, max_drop=0.02, incomplete=report.incomplete))
    store.finish_run(db, gated, metric_sets)
    return gated.to_json()


def _same(a: Any, b: Any) -> bool:
    """Equal to the last digit; None and NaN (a missing number in a frame) are the same absence."""
    missing = [x is None or (isinstance(x, float) and math.isnan(x)) for x in (a, b)]
    if any(missing):
        return all(missing)
    return bool(a == b)


def test_report_numbers_equal_a_brute_force_recount(randomised_run):
    _, _, report, records = randomised_run
    for entry in report["models"]:
        mine = [r for r in records if r.model == entry["model"]]
        scored = [r for r in mine if r.stop_reason != "model_error"]
        m = entry["metrics"]
        # One denominator: errored attempts are in the error rate only.
        assert m["error_rate"] == float(Fraction(len(mine) - len(scored), len(mine)))
        assert m["pass_rate"] == float(Fraction(sum(r.score.passed for r in scored), len(scored)))
        for scorer, metric in (("selection", "selection_accuracy"), ("arguments", "argument_accuracy"), ("sequence", "sequence_accuracy")):
            values = [s.value for r in scored for s in r.score.scores if s.scorer == scorer and s.applies]
            assert m[metric] == (float(Fraction(int(sum(values)), len(values))) if values else None), metric  # type: ignore[arg-type]
        for metric, scorer in (("execution_accuracy", "execution"), ("over_call_rate", "over_call"), ("task_completion", "judge")):
            values = [s.value for r in scored for s in r.score.scores if s.scorer == scorer and s.applies]
            assert m[metric] == (float(Fraction(int(sum(values)), len(values))) if values else None), metric  # type: ignore[arg-type]
        costs = [r.cost_usd for r in mine]
        if any(c is None for c in costs):
            assert m["cost_usd"] is None and entry["model"] in report["unpricedModels"]
        else:
            assert m["cost_usd"] == math.fsum(c for c in costs if c is not None)
            assert entry["model"] not in report["unpricedModels"]
        assert m["retries"] == sum(r.retries for r in mine)
        for case in entry["cases"]:
            outcomes = [r.score.passed for r in scored if r.case_id == case["id"]]
            n = len(outcomes)
            assert (case["runs"], case["passes"]) == (n, sum(outcomes))
            for k in range(1, RUNS + 1):
                draws = list(itertools.combinations(outcomes, k)) if k <= n else []
                hat = Fraction(sum(all(d) for d in draws), len(draws)) if draws else None
                at = Fraction(sum(any(d) for d in draws), len(draws)) if draws else None
                assert case["passHatK"][str(k)] == (None if hat is None else pytest.approx(float(hat), rel=1e-15, abs=1e-15))
                assert case["passAtK"][str(k)] == (None if at is None else pytest.approx(float(at), rel=1e-15, abs=1e-15))


def test_report_gate_dashboard_and_exports_agree_to_the_last_digit(randomised_run, tmp_path):
    db, run_id, report, _ = randomised_run
    by_model = {entry["model"]: entry for entry in report["models"]}

    # gate: reads the report as written to a file; every regression's "current" is the report's number
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    baseline = json.loads(path.read_text(encoding="utf-8"))
    for entry in baseline["models"]:
        entry["metrics"] = {metric: (0.0 if direction == "lower" else 1.0) for metric, direction in regression_metrics()}
    result = compare_to_baseline(json.loads(path.read_text(encoding="utf-8")), baseline, max_drop=0.0)
    assert result.regressions
    for regression in result.regressions:
        assert regression.current == by_model[regression.model]["metrics"][regression.metric]

    # dashboard: the model summary (stored) and the same computed live through a kind filter that keeps everything
    summary = queries.model_summary(db, AttemptFilters(run_id=run_id))
    live = queries.model_summary(db, AttemptFilters(run_id=run_id, kinds=("hard", "soft")))
    assert list(summary["model"]) == sorted(by_model)
    for frame in (summary, live):
        for row in frame.to_dict("records"):
            metrics = by_model[row["model"]]["metrics"]
            for column in queries.SUMMARY_COLUMNS[3:] + queries.LAYER2_COLUMNS:
                assert _same(row[column], metrics.get(column)), (row["model"], column, row[column], metrics.get(column))
    # the Latency and cost page groups by model over the runs in scope (one run here): the report's spend numbers
    latency = queries.latency(db, AttemptFilters(run_id=run_id))
    assert list(latency["model"]) == sorted(by_model)
    shown = {"latency_p50_ms": "latency_p50_ms", "latency_p95_ms": "latency_p95_ms", "input_tokens_per_attempt": "mean_input_tokens"}
    shown |= {"tokens_per_correct": "tokens_per_correct", "cost_per_attempt_usd": "cost_per_attempt_usd", "cost_per_correct_usd": "cost_per_correct_usd"}
    for row in latency.to_dict("records"):
        metrics = by_model[row["model"]]["metrics"]
        assert row["attempts"] == metrics["attempts"]
        for column, metric in shown.items():
            assert _same(row[column], metrics[metric]), (row["model"], column, row[column], metrics[metric])
    matrix = queries.matrix(db, AttemptFilters(run_id=run_id))
    cases = {(entry["model"], case["id"]): case for entry in report["models"] for case in entry["cases"]}
    assert len(matrix) == len(cases)
    for row in matrix.to_dict("records"):
        case = cases[(row["model"], row["case_id"])]
        assert (row["passes"], row["runs"]) == (case["passes"], case["runs"])
        assert _same(row["pass_rate"], case["pass_rate"]) and _same(row["pass_hat_k"], case["pass_hat_k"])

    # exports: CSV and Parquet of the stored metrics carry the report's numbers
    expected: dict[tuple[str, str, str, str], Any] = {("run", "", "", metric): value for metric, value in report["metrics"].items()}
    for entry in report["models"]:
        expected.update({("model", entry["model"], "", metric): value for metric, value in entry["metrics"].items()})
        for case in entry["cases"]:
            for k, value in case["passHatK"].items():
                expected[("case", entry["model"], case["id"], f"pass_hat_k@{k}")] = value
            expected[("case", entry["model"], case["id"], "pass_rate")] = case["pass_rate"]
    rows = list(csv.DictReader(io.StringIO(queries.metrics_export(db, AttemptFilters(run_id=run_id), "csv").decode())))
    exported = {(r["scope"], r["model"], r["case_id"], r["metric"]): (float(r["value"]) if r["value"] else None) for r in rows}
    parquet_path = tmp_path / "metrics.parquet"
    parquet_path.write_bytes(queries.metrics_export(db, AttemptFilters(run_id=run_id), "parquet"))
    parquet_rows = duckdb.connect().execute("SELECT scope, model, case_id, metric, value FROM read_parquet(?)", [str(parquet_path)]).fetchall()
    from_parquet = {(scope, model, case_id, metric): value for scope, model, case_id, metric, value in parquet_rows}
    for key, value in expected.items():
        assert _same(exported[key], value), (key, exported[key], value)
        assert _same(from_parquet[key], value), (key, from_parquet[key], value)


def test_the_per_call_and_per_tool_figures_of_the_report_and_the_latency_page_agree(randomised_run):
    db, run_id, report, _ = randomised_run
    calls = {row["model"]: row for row in queries.model_call_latency(db, AttemptFilters(run_id=run_id)).to_dict("records")}
    for entry in report["models"]:
        shown, mine = calls[entry["model"]], entry["modelCalls"]
        assert shown["calls"] == mine["calls"] and shown["retries"] == mine["retries"]
        pairs = (("latency_p50_ms", "latency_p50_ms"), ("latency_p95_ms", "latency_p95_ms"), ("cost_per_call_usd", "cost_per_call_usd"))
        pairs += (("input_tokens_per_call", "mean_input_tokens"), ("output_tokens_per_call", "mean_output_tokens"))
        for column, key in pairs:
            assert _same(shown[column], mine[key]), (entry["model"], column)
    # every table of the Latency and cost page, as shown and as its CSV download, carries the report's numbers
    filters = AttemptFilters(run_id=run_id)
    tool_frame = queries.tool_latency(db, filters)
    assert list(tool_frame.columns) == list(queries.TOOL_LATENCY_COLUMNS)
    downloaded = list(csv.DictReader(io.StringIO(queries.frame_csv(tool_frame))))
    tools = {row["tool"]: row for row in tool_frame.to_dict("records")}
    assert list(tools) == [t["tool"] for t in report["toolCalls"]]
    assert [row["tool"] for row in downloaded] == list(tools)
    for tool, row in zip(report["toolCalls"], downloaded, strict=True):
        shown = tools[tool["tool"]]
        faulted = sum(fault["calls"] for fault in tool["faults"])
        assert (shown["calls"], shown["retries"], shown["faulted_calls"]) == (tool["calls"], tool["retries"], faulted)
        assert (int(row["calls"]), int(row["retries"]), int(row["faulted_calls"])) == (tool["calls"], tool["retries"], faulted)
        for column in ("error_rate", "latency_p50_ms", "latency_p95_ms"):
            assert _same(shown[column], tool[column]) and _same(float(row[column]) if row[column] else None, tool[column]), (tool["tool"], column)
    for entry in report["models"]:
        assert DISTRACTOR_TOOL not in {t["tool"] for t in entry["toolCalls"]}


def test_per_tool_faulted_calls_count_only_the_calls_that_had_a_fault(randomised_run):
    """Faulted and unfaulted calls of one tool in the same scope: the column is the faulted ones, never every call."""
    db, run_id, report, records = randomised_run
    executions = [e for r in records for e in json.loads(r.transcript_json or "{}")["executions"] if e["tool"] == "get_weather"]
    expected = sum(1 for e in executions if e["fault"])
    assert 0 < expected < len(executions)  # both kinds of call are in scope
    (shown,) = queries.tool_latency(db, AttemptFilters(run_id=run_id)).query("tool == 'get_weather'").to_dict("records")
    (reported,) = [t for t in report["toolCalls"] if t["tool"] == "get_weather"]
    assert shown["faulted_calls"] == expected == sum(f["calls"] for f in reported["faults"])
    assert shown["calls"] == reported["calls"] == len(executions)


def test_a_distractor_call_is_no_server_call_in_the_report_the_page_or_its_export(randomised_run):
    """A call of a tool `evalcore perturb` listed beside the server's was never sent: it is in no per-tool figure."""
    db, run_id, report, records = randomised_run
    assert any(DISTRACTOR_TOOL in (r.transcript_json or "") for r in records)
    tool_frame = queries.tool_latency(db, AttemptFilters(run_id=run_id))
    assert DISTRACTOR_TOOL not in set(tool_frame["tool"])
    assert DISTRACTOR_TOOL not in queries.frame_csv(tool_frame)
    assert DISTRACTOR_TOOL not in {t["tool"] for t in report["toolCalls"]}
    sent = [e for r in records for e in json.loads(r.transcript_json or "{}")["executions"] if e["tool"] == "get_weather"]
    (weather,) = [t for t in report["toolCalls"] if t["tool"] == "get_weather"]
    assert weather["calls"] == len(sent) and _same(weather["error_rate"], sum(e["is_error"] for e in sent) / len(sent))

    # where a distractor call really comes from: a perturbed arm, shown when picked by id (the default scope leaves arms out)
    store.create_run(
        db, run_id="p1", run_date=date(2026, 12, 2), golden_path="golden.yaml", golden_hash="g", server_target="http://127.0.0.1:1/mcp",
        server_name="srv", server_fingerprint="fp", server_tools=[], models=[m.name for m in MODELS], runs=RUNS, config={}, kind="perturb-arm",
    )  # fmt: skip
    store.write_attempts(db, "p1", records)
    arm = _finish(db, "p1", records)
    picked = queries.tool_latency(db, AttemptFilters(run_id="p1"))
    assert DISTRACTOR_TOOL not in set(picked["tool"]) and DISTRACTOR_TOOL not in {t["tool"] for t in arm["toolCalls"]}
    assert list(picked["calls"]) == [t["calls"] for t in arm["toolCalls"]]
    assert list(picked["error_rate"]) == [t["error_rate"] for t in arm["toolCalls"]]


def test_the_latency_over_time_table_of_one_run_carries_the_reports_spend_numbers(randomised_run):
    db, run_id, report, _ = randomised_run
    over_time = queries.latency_over_time(db, AttemptFilters(run_id=run_id))
    assert {pd.Timestamp(day).date() for day in over_time["run_date"]} == {date(2026, 12, 1)}
    by_model = {entry["model"]: entry["metrics"] for entry in report["models"]}
    assert list(over_time["model"]) == sorted(by_model)
    shown = {"latency_p50_ms": "latency_p50_ms", "latency_p95_ms": "latency_p95_ms", "input_tokens_per_attempt": "mean_input_tokens"}
    shown |= {"output_tokens_per_attempt": "mean_output_tokens", "tokens_per_correct": "tokens_per_correct"}
    shown |= {"cost_per_attempt_usd": "cost_per_attempt_usd", "cost_per_correct_usd": "cost_per_correct_usd"}
    for row in over_time.to_dict("records"):
        metrics = by_model[row["model"]]
        assert row["attempts"] == metrics["attempts"]
        for column, metric in shown.items():
            assert _same(row[column], metrics[metric]), (row["model"], column, row[column], metrics[metric])


def test_a_gate_against_a_baseline_read_from_the_store_uses_both_runs_stored_numbers(randomised_run):
    db, run_id, first, _ = randomised_run
    errored = sum(int(m["metrics"]["errored"] or 0) for m in first["models"])
    if errored:  # a run with errored attempts is never a baseline, even by hand: the gate is fed its stored report
        with pytest.raises(StoreError, match="cannot be a baseline"):
            store.accept_baseline(db, run_id)
        assert store.last_green_report(db, golden_path="golden.yaml", exclude_run="r2") is None
        stored_baseline = json.loads(store.load_run(db, run_id)["report_json"])
    else:
        store.accept_baseline(db, run_id)
    store.create_run(
        db, run_id="r2", run_date=date(2026, 12, 2), golden_path="golden.yaml", golden_hash="g", server_target="http://127.0.0.1:1/mcp",
        server_name="srv", server_fingerprint="fp", server_tools=[], models=[m.name for m in MODELS], runs=RUNS, config={},
    )  # fmt: skip
    records = _records(random.Random(7))
    store.write_attempts(db, "r2", records)
    golden = GoldenSet(Path("golden.yaml"), CASES, "g")
    report, metric_sets = build_report(store.load_run(db, "r2"), golden, records, MODELS)
    baseline = stored_baseline if errored else store.last_green_report(db, golden_path="golden.yaml", exclude_run="r2")
    assert baseline is not None and baseline["runId"] == run_id == first["runId"]
    gate = decide(report.to_json(), baseline, max_drop=0.0, incomplete=None)
    stored_first = {s.model: s for s in store.load_metrics(db, run_id) if s.scope == "model"}
    now = {s.model: s for s in metric_sets if s.scope == "model"}
    for regression in gate.regressions:
        assert regression.baseline == stored_first[regression.model].get(regression.metric)
        assert regression.current == now[regression.model].get(regression.metric)


def test_the_metrics_export_follows_the_kind_filter_as_the_summary_does(randomised_run):
    db, run_id, _, _ = randomised_run
    hard = AttemptFilters(run_id=run_id, kinds=("hard",))
    frame = queries.metrics_frame(db, hard)
    assert set(frame[frame["scope"] == "case"]["case_id"]) == {"weather"}  # the only hard case
    live = {row["model"]: row for row in queries.model_summary(db, hard).to_dict("records")}
    exported = {
        m: v
        for m, metric, v, scope in zip(frame["model"], frame["metric"], frame["value"], frame["scope"], strict=True)
        if scope == "model" and metric == "pass_rate"
    }
    assert set(exported) == set(live) and all(_same(exported[m], live[m]["pass_rate"]) for m in live)
    rows = list(csv.DictReader(io.StringIO(queries.metrics_export(db, hard, "csv").decode())))
    assert {r["case_id"] for r in rows if r["scope"] == "case"} == {"weather"}


def test_a_resume_recomputes_and_replaces_the_stored_metrics(randomised_run):
    db, run_id, report, _ = randomised_run
    again = _finish(db, run_id, store.load_attempt_records(db, run_id))

    assert again["models"] == report["models"]
    assert len(store.load_metrics(db, run_id)) == len(MODELS) * len(CASES) + len(MODELS) + 1


def test_the_report_is_valid_against_its_published_json_schema(randomised_run):
    _, _, report, _ = randomised_run
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schemaVersion"]["const"] == SCHEMA_VERSION == report["schemaVersion"]
    jsonschema.Draft202012Validator(schema).validate(report)
    broken = {**report, "models": [{**report["models"][0], "metrics": {"pass_rate": "high"}}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)
