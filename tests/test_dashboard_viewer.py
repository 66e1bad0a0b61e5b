"""The Runs and Compare pages, shareable URLs and downloads, driven with Streamlit's AppTest against a store recorded by
real `evalcore compare` and `evalcore run` commands (sim models, the reference server); tests/test_browser.py opens both
pages once in Chromium."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.behaviour.history import run_points
from evalcore.cli import main
from evalcore.compare.overrides import catalog_diff, seen_catalog
from evalcore.dashboard import data, queries
from evalcore.dashboard.queries import AttemptFilters, RunFilters
from evalcore.run_kinds import run_status
from evalcore.store.behaviour import create_run, fail_run
from evalcore.store.comparisons import comparisons_export

ROOT = Path(__file__).resolve().parents[1]
RUNS = str(ROOT / "pages" / "6_Runs.py")
COMPARE = str(ROOT / "pages" / "7_Compare.py")
LATENCY = str(ROOT / "pages" / "1_Latency_and_cost.py")
FLAKY = str(ROOT / "pages" / "3_Flaky_cases.py")
DRIFT = str(ROOT / "pages" / "2_Drift.py")
EXPORT = str(ROOT / "pages" / "5_Export.py")

# sim/lexical misses the knowledge-base case under the server's own words and finds it under the override's.
GOLDEN = """\
cases:
  - id: kb-password-reset
    prompt: "A customer's password reset email never arrives. What's the procedure on our side?"
    expect_tool: search_knowledge_base
  - id: weather-paris
    prompt: "What's the weather like in Paris right now?"
    expect_tool: get_weather
    expect_args: {city: Paris}
"""
OTHER_GOLDEN = """\
cases:
  - id: weather-lyon
    prompt: "What's the weather like in Lyon?"
    expect_tool: get_weather
    expect_args: {city: Lyon}
"""
OVERRIDE = """\
tools:
  search_knowledge_base:
    description: "Search help-desk articles (procedures, policies, how-to guides) by keyword: password reset emails, refunds."
"""


@dataclass(frozen=True)
class Recorded:
    db: Path
    baseline: str  # the arms of a live comparison (the candidate's models saw OVERRIDE)
    candidate: str
    live: dict  # its JSON
    stored: dict  # `compare --baseline-run baseline --candidate-run candidate`'s JSON
    other: str  # a run of another golden set
    stopped: str  # a run that failed before its end


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, reference_url) -> Recorded:
    folder = tmp_path_factory.mktemp("viewer")
    db = folder / "evals.duckdb"
    (folder / "tasks.yaml").write_text(GOLDEN)
    (folder / "other.yaml").write_text(OTHER_GOLDEN)
    (folder / "overrides.yaml").write_text(OVERRIDE)
    common = ["--db", str(db), "--models", "sim/lexical"]
    live = folder / "live.json"
    arguments = ["--golden", str(folder / "tasks.yaml"), "--url", reference_url, "--candidate-tools", str(folder / "overrides.yaml"), "--runs", "5"]
    assert main(["compare", *common, *arguments, "--json", str(live)]) == 0
    live_report = json.loads(live.read_text())
    stored = folder / "stored.json"
    baseline, candidate = live_report["baselineRunId"], live_report["candidateRunId"]
    assert main(["compare", "--db", str(db), "--baseline-run", baseline, "--candidate-run", candidate, "--json", str(stored)]) == 0
    out = folder / "other.json"
    other = ["--golden", str(folder / "other.yaml"), "--url", reference_url, "--runs", "2", "--out", str(out), "--date", "2026-03-01"]
    assert main(["run", *common, *other]) in (0, 1)
    create_run(
        db, run_id="stopped-run", run_date=date(2026, 2, 1), golden_path="tasks.yaml", golden_hash="g", server_target="http://127.0.0.1:1/mcp",
        server_name=None, server_fingerprint="f", server_tools=[], models=["sim/other"], runs=1, config={},
    )  # fmt: skip
    fail_run(db, "stopped-run", status="failed", error="the server went away")
    return Recorded(db, baseline, candidate, live_report, json.loads(stored.read_text()), json.loads(out.read_text())["runId"], "stopped-run")


def _app(path: str, db: Path, monkeypatch, **params: str | list[str]) -> AppTest:
    monkeypatch.setenv("EVALCORE_DB", str(db))
    app = AppTest.from_file(path)
    for key, value in params.items():
        app.query_params[key] = value
    app.run(timeout=120)
    assert not app.exception, app.exception
    return app


def _frame(app: AppTest, columns: set[str]) -> pd.DataFrame:
    """The first table the page shows with these columns."""
    return next(element.value for element in app.dataframe if columns <= set(element.value.columns))


def _download_labels(app: AppTest) -> list[str]:
    return [button.proto.label for button in app.get("download_button")]


def test_a_runs_status_follows_its_stored_gate_and_a_failure_never_reads_green():
    green = {"status": "pass", "passed": True, "green": True}
    assert run_status("complete", green) == "green"
    assert run_status("complete", {**green, "green": False}) == "passed, not green"
    assert run_status("complete", {"status": "no_baseline", "passed": False, "green": False}) == "not green: no baseline yet"
    assert run_status("complete", {"status": "fail", "passed": False, "green": False}) == "gate failed"
    # An incomplete run (errored attempts) is incomplete even if a gate somewhere says passed.
    assert run_status("complete", {"status": "incomplete", "passed": True, "green": True}) == "incomplete"
    assert run_status("complete", None) == "not gated"
    for unfinished in ("running", "crashed", "failed", "cancelled"):
        assert run_status(unfinished, green) == unfinished


def test_the_run_list_gives_each_run_its_status_kind_and_why_and_filters_it(recorded):
    runs = queries.run_list(recorded.db).set_index("run_id")
    assert set(runs.index) == {recorded.baseline, recorded.candidate, recorded.other, recorded.stopped}
    assert runs.loc[recorded.baseline, "kind"] == "compare: baseline arm" and runs.loc[recorded.candidate, "kind"] == "compare: candidate arm"
    assert runs.loc[recorded.other, "kind"] == "run"
    stopped = runs.loc[recorded.stopped]
    assert (stopped["status"], stopped["why"], stopped["attempts"]) == ("failed", "the server went away", 0)
    with duckdb.connect(str(recorded.db), read_only=True) as connection:
        gates = dict(connection.execute("SELECT run_id, json_extract(report_json, '$.gate') FROM behaviour_runs WHERE status = 'complete'").fetchall())
    for run_id, gate in gates.items():
        assert runs.loc[run_id, "status"] == run_status("complete", json.loads(gate)) and runs.loc[run_id, "why"] == json.loads(gate)["reason"]
    # The baseline arm misses the knowledge-base case under the server's words: a case gate is unmet, so never green.
    assert runs.loc[recorded.baseline, "status"] != "green"
    assert set(queries.run_list(recorded.db, RunFilters(kinds=("run",)))["run_id"]) == {recorded.other, recorded.stopped}
    assert set(queries.run_list(recorded.db, RunFilters(models=("sim/other",)))["run_id"]) == {recorded.stopped}
    assert set(queries.run_list(recorded.db, RunFilters(statuses=("failed",)))["run_id"]) == {recorded.stopped}
    assert set(queries.run_list(recorded.db, RunFilters(golden_paths=(str(runs.loc[recorded.other, "golden_path"]),)))["run_id"]) == {recorded.other}
    march = queries.run_list(recorded.db, RunFilters(date_from=date(2026, 3, 1), date_to=date(2026, 3, 1)))
    assert list(march["run_id"]) == [recorded.other]


def test_the_runs_page_restores_its_filters_and_pick_from_the_url_and_offers_the_comparison(recorded, monkeypatch):
    app = _app(RUNS, recorded.db, monkeypatch, kind=["compare: baseline arm", "compare: candidate arm"], runs=[recorded.candidate, recorded.baseline])
    assert app.sidebar.multiselect(key="runs_kind").value == ["compare: baseline arm", "compare: candidate arm"]
    shown = _frame(app, {"run_id", "status", "kind"})
    assert set(shown["run_id"]) == {recorded.baseline, recorded.candidate}
    assert "2 of 4 runs" in [text.value for text in app.text]
    assert app.multiselect(key="runs_picked").value == [recorded.candidate, recorded.baseline]
    assert app.button(key="compare_picked").label == "Compare these two runs"
    assert f"baseline {recorded.baseline} · candidate {recorded.candidate}" in [text.value for text in app.text]
    assert {"Download runs as CSV", "Download runs as Parquet"} <= set(_download_labels(app))
    # A change of filter is written back to the URL, so the view can be shared.
    app.sidebar.multiselect(key="runs_status").set_value(["failed"]).run(timeout=120)
    assert app.query_params["status"] == ["failed"] or app.query_params["status"] == "failed"
    assert list(_frame(app, {"run_id", "status"})["run_id"]) == []  # no arm of the comparison failed


def test_the_compare_page_shows_the_numbers_evalcore_compare_gives_for_two_stored_runs(recorded, monkeypatch):
    app = _app(COMPARE, recorded.db, monkeypatch, baseline=recorded.baseline, candidate=recorded.candidate)
    cases, models = data.comparison_frames(recorded.stored)
    shown = _frame(app, {"verdict", "q_value", "case_id"})
    columns = ["case_id", "baseline_passed", "baseline_scored", "candidate_passed", "candidate_scored", "delta", "p_value", "q_value", "verdict"]
    pd.testing.assert_frame_equal(shown[columns].reset_index(drop=True), cases[columns], check_dtype=False)
    assert dict(zip(shown["case_id"], shown["verdict"], strict=True)) == {"kb-password-reset": "better", "weather-paris": "no_difference"}
    verdict = app.success[0]  # the page's first word; the attempts' PASS headers come below
    counted = "cases: 1 better, 0 worse, 1 no difference, 0 inconclusive; models, their cases pooled: 1 better, 0 worse, 0 no difference, 0 inconclusive"
    assert verdict.value == f"Nothing is significantly worse: {counted}."
    assert len(app.get("plotly_chart")) == 3  # both matrices and the delta matrix
    assert {"Download comparison_cases as CSV", "Download comparison_cases as Parquet"} <= set(_download_labels(app))
    # Per model, its cases pooled, as the command gives it too.
    shown_models = next(e.value for e in app.dataframe if "case_id" not in e.value.columns and "verdict" in e.value.columns)
    pooled = ["delta", "p_value", "verdict"]
    pd.testing.assert_frame_equal(shown_models[pooled].reset_index(drop=True), models[pooled], check_dtype=False)


def test_a_stored_comparison_opens_as_it_was_computed_with_the_description_diff_and_both_transcripts(recorded, monkeypatch):
    with duckdb.connect(str(recorded.db), read_only=True) as connection:
        (comparison_id,) = connection.execute("SELECT comparison_id FROM comparisons WHERE candidate_kind = 'tools'").fetchone()
    app = _app(COMPARE, recorded.db, monkeypatch, comparison=comparison_id, model="sim/lexical", case="kb-password-reset")
    assert app.sidebar.selectbox(key="compare_stored").value == comparison_id
    cases, _ = data.comparison_frames(recorded.live)
    shown = _frame(app, {"verdict", "case_id"})[["case_id", "verdict", "p_value"]]
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), cases[["case_id", "verdict", "p_value"]])
    assert (app.selectbox(key="compare_model").value, app.selectbox(key="compare_case").value) == ("sim/lexical", "kb-password-reset")
    codes = [code.value for code in app.code]
    diff = next(code for code in codes if code.startswith("search_knowledge_base\n"))
    assert "+Search help-desk articles (procedures, policies, how-to guides) by keyword: password reset emails, refunds." in diff
    assert any("(this case expects it)" in caption.value for caption in app.caption)
    # Both transcripts side by side: the baseline's failing attempt, the candidate's passing one.
    headers = [e.value for e in app.error] + [e.value for e in app.success]
    assert any(h.startswith("Attempt ") and "FAIL" in h for h in headers) and any(h.startswith("Attempt ") and "PASS" in h for h in headers)


def test_the_compare_page_refuses_two_golden_sets_with_the_commands_words(recorded, monkeypatch):
    app = _app(COMPARE, recorded.db, monkeypatch, baseline=recorded.other, candidate=recorded.candidate)
    (error,) = app.error
    assert "a comparison needs one golden set" in error.value and recorded.other.replace("-", "\\-") in error.value
    assert not app.get("plotly_chart")


def test_the_shared_filters_come_from_and_go_to_the_url(recorded, monkeypatch):
    app = _app(LATENCY, recorded.db, monkeypatch, models="sim/lexical", kinds="soft", **{"from": "2026-03-01"})
    assert app.sidebar.multiselect(key="filter_models").value == ["sim/lexical"]
    assert app.sidebar.multiselect(key="filter_kinds").value == ["soft"]
    assert app.sidebar.date_input(key="filter_dates").value[0] == date(2026, 3, 1)
    app.sidebar.multiselect(key="filter_models").set_value([]).run(timeout=120)
    assert "models" not in app.query_params and app.query_params["kinds"] in ("soft", ["soft"])


def test_a_table_downloads_as_parquet_with_the_values_it_shows(tmp_path):
    frame = pd.DataFrame({"model": ["sim/a", "sim/b"], "passed": [True, False], "reason": ["<b>x</b>", None], "rate": [0.5, None]})
    written = tmp_path / "table.parquet"
    written.write_bytes(queries.frame_export(frame, "parquet"))
    rows = duckdb.sql("SELECT model, passed, reason, rate FROM read_parquet($path)", params={"path": str(written)}).fetchall()
    assert rows == [("sim/a", True, "<b>x</b>", 0.5), ("sim/b", False, None, None)]
    assert queries.frame_export(frame, "csv").decode() == queries.frame_csv(frame)


def test_what_the_models_saw_differently_names_renames_and_diffs_descriptions():
    tools = [{"name": "get_weather", "description": "Weather now."}, {"name": "search", "description": "Search."}]
    baseline = seen_catalog(tools, {})
    assert catalog_diff(baseline, baseline) == {}
    candidate = seen_catalog(tools, {"tools": {"search": {"description": "Search articles.", "name": "find_article"}}})
    assert catalog_diff(baseline, candidate) == {"search": "shown as find_article (was search)\n--- baseline\n+++ candidate\n-Search.\n+Search articles."}
    assert catalog_diff(baseline, seen_catalog(tools[:1], {})) == {"search": "removed tool search"}
    perturbed = seen_catalog(
        tools, {"tools": {"get_weather": {"remove_description": True}}, "distractors": [{"name": "get_forecast", "description": "Forecast."}]}
    )
    assert catalog_diff(baseline, perturbed) == {
        "get_weather": "--- baseline\n+++ candidate\n-Weather now.",
        "get_forecast": "added tool get_forecast: Forecast.",
    }


def test_the_drift_and_flaky_pages_reopen_the_view_their_url_names(demo_db, monkeypatch):
    db, _ = demo_db
    nightly = str(queries.runs(db)["golden_path"].value_counts().index[0])  # the set with the longest history
    flaky = queries.flaky_cases(db, AttemptFilters(golden_path=nightly))
    assert len(flaky) >= 2, flaky
    second = flaky.iloc[1]  # not the page's default pick (the flakiest)
    app = _app(FLAKY, db, monkeypatch, golden=nightly, model=str(second["model"]), case=str(second["case_id"]))
    assert app.selectbox(key="flaky_pick").value == 1
    models = sorted({point.model for point in run_points(db, golden_path=nightly)})
    app = _app(DRIFT, db, monkeypatch, golden=nightly, models=models[0], min_baseline="3")
    assert app.sidebar.multiselect(key="drift_models").value == [models[0]] and app.sidebar.number_input(key="drift_min_baseline").value == 3
    app.sidebar.number_input(key="drift_min_baseline").set_value(2).run(timeout=120)
    assert "min_baseline" not in app.query_params and app.query_params["models"] in (models[0], [models[0]])


def test_the_compare_page_opens_on_two_runs_of_one_golden_set_by_default(recorded, monkeypatch):
    app = _app(COMPARE, recorded.db, monkeypatch)
    assert not [error for error in app.error if "golden set" in error.value]
    picked = {app.sidebar.selectbox(key="compare_baseline").value, app.sidebar.selectbox(key="compare_candidate").value}
    assert picked == {recorded.baseline, recorded.candidate}
    assert app.query_params["baseline"] in (recorded.baseline, [recorded.baseline], recorded.candidate, [recorded.candidate])


def test_the_export_page_offers_the_stored_comparisons_as_csv_and_parquet(recorded, monkeypatch):
    app = _app(EXPORT, recorded.db, monkeypatch)
    buttons = {button.proto.label: button for button in app.get("download_button")}
    for file_format in ("CSV", "Parquet"):
        assert not buttons[f"Download the comparisons as {file_format}"].proto.disabled  # the fixture's two comparisons
        assert buttons[f"Download the catalog sweeps as {file_format}"].proto.disabled  # no `evalcore perturb` here
    rows = list(csv.DictReader(io.StringIO(comparisons_export(recorded.db, "csv").decode())))
    assert {row["comparison_id"] for row in rows} and any(row["case_id"] == "kb-password-reset" for row in rows)


def test_the_compare_page_says_what_is_significantly_worse_outlines_it_and_opens_on_the_most_changed_case(demo_db, monkeypatch):
    """The demo's first night against its last, 5 runs each: single cells go 5/5 -> 0/5 without being significant over
    84 cases, while models pooled are worse. The heading names those models; the cells they rest on are outlined; the
    others read how many runs would tell; "One case" opens on the biggest change of a cell the verdict rests on."""
    import json as json_module

    from evalcore.dashboard import figures
    from evalcore.dashboard.widgets import literal_label

    db, _ = demo_db
    nightly = queries.run_list(db, RunFilters(golden_paths=("golden/tasks.yaml",), kinds=("run",)))
    older, newer = str(nightly["run_id"].iloc[-1]), str(nightly["run_id"].iloc[0])
    app = _app(COMPARE, db, monkeypatch, baseline=older, candidate=newer)
    latest = next(p.model for p in run_points(db) if "assistant-latest" in p.model)
    heading = app.error[0].value
    assert heading.startswith(literal_label("Significantly worse or not measured: ")), heading
    assert literal_label(f"{figures.model_label(latest, True)}, its cases pooled: ") in heading
    assert "outlined in red" in heading
    delta = json_module.loads(app.get("plotly_chart")[2].proto.spec)
    outlined = delta["layout"].get("shapes", [])
    cells = [trace for trace in delta["data"] if trace.get("name") == "cells"][0]
    dropped = [text for text in cells["text"] if text.startswith("-1.00 n.s.")]
    assert dropped and all(re.fullmatch(r"-1\.00 n\.s\.<br>needs (\d+) runs", text) and int(text.rsplit(" ", 2)[1]) > 5 for text in dropped), dropped
    assert len(outlined) >= 4  # at least the model update's three cases and the description change's one
    assert (app.selectbox(key="compare_model").value, app.selectbox(key="compare_case").value) == (latest, "calendar-day")
