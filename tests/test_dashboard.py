"""The dashboard pages, driven with Streamlit's AppTest against real stores (no browser; tests/test_browser.py drives Chromium)."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from evalcore.behaviour.history import run_points
from evalcore.commands.dashboard import streamlit_command
from evalcore.dashboard import figures, progress, queries, widgets
from evalcore.models.types import ToolCall
from evalcore.records import AttemptRecord, AttemptScore, Score
from evalcore.store.behaviour import create_run, write_attempts
from evalcore.store.conformance import record_conformance_run
from tests.builders import Store, build_store, conformance_report, finish_recorded_run, matrix_frame

ROOT = Path(__file__).resolve().parents[1]
HOME = str(ROOT / "app.py")
LATENCY = str(ROOT / "pages" / "1_Latency_and_cost.py")
DRIFT = str(ROOT / "pages" / "2_Drift.py")
FLAKY = str(ROOT / "pages" / "3_Flaky_cases.py")
EXPORT = str(ROOT / "pages" / "5_Export.py")
HOSTILE = "<script>alert(1)</script> **bold** <img src=x onerror=alert(2)>"


def write_synthetic_run(db: Path, run_id: str, run_date: date, outcomes: dict[str, list[bool]], *, final_text: str = "done", model: str = "sim/fake") -> None:
    """A complete run of one model written straight through the store API; case -> pass/fail per attempt."""
    create_run(
        db,
        run_id=run_id,
        run_date=run_date,
        golden_path="missing-golden.yaml",
        golden_hash="g",
        server_target="http://127.0.0.1:1/mcp",
        server_name="demo",
        server_fingerprint="abc",
        server_tools=[],
        models=[model],
        runs=max(len(v) for v in outcomes.values()),
        config={},
    )
    records = []
    for case_id, passes in outcomes.items():
        for attempt, passed in enumerate(passes, start=1):
            transcript = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": f"prompt of {case_id}"}], "executions": []}
            records.append(
                AttemptRecord(
                    model=model,
                    case_id=case_id,
                    attempt=attempt,
                    case_hash=case_id,
                    case_kind="soft",
                    simulated=True,
                    model_version="fake-1",
                    score=AttemptScore(
                        (Score("selection", 1.0, True), Score("arguments", float(passed), True)), passed, () if passed else (f"reason {HOSTILE}",)
                    ),
                    tool_calls=(ToolCall("c1", "lookup", {"q": HOSTILE}),),
                    final_text=final_text,
                    stop_reason="final",
                    error=None,
                    latency_ms=12.0,
                    input_tokens=10,
                    output_tokens=5,
                    cost_usd=None,
                    retries=0,
                    transcript_json=json.dumps(transcript),
                )
            )
    write_attempts(db, run_id, records)
    finish_recorded_run(db, run_id, records)


@pytest.fixture(scope="module")
def store(tmp_path_factory, reference_url) -> Store:
    return build_store(tmp_path_factory.mktemp("dashboard-pages"), reference_url)


def _app(path: str, db: Path, monkeypatch, **params: str) -> AppTest:
    monkeypatch.setenv("EVALCORE_DB", str(db))
    app = AppTest.from_file(path)
    for key, value in params.items():
        app.query_params[key] = value
    app.run(timeout=120)
    assert not app.exception, app.exception
    return app


def _shown(model: str) -> str:
    """How a sim model appears in the page's tables and charts."""
    return figures.model_label(model, True)


def _texts(app: AppTest) -> list[str]:
    return [element.value for element in app.text]


def _rendered_as_markup(app: AppTest) -> str:
    """Everything that Streamlit renders as markdown or HTML (which must never carry untrusted text)."""
    parts = [e.value for e in app.markdown] + [e.value for e in app.caption] + [e.value for e in app.info] + [e.value for e in app.warning]
    parts += [e.value for e in app.success] + [e.value for e in app.error] + [e.value for e in app.subheader] + [e.value for e in app.title]
    return "\n".join(parts)


@pytest.mark.parametrize("page", [HOME, LATENCY, DRIFT, FLAKY, EXPORT])
def test_every_page_explains_how_to_get_data_when_the_store_is_missing(page, tmp_path, monkeypatch):
    app = _app(page, tmp_path / "none.duckdb", monkeypatch)
    assert "python -m evalcore demo" in app.info[0].value and "make run" in app.info[0].value
    assert app.button[0].label.startswith("Build the demo history")
    assert not app.dataframe


def test_drift_page_shows_the_demo_changes_with_their_evidence(demo_db, monkeypatch):
    db, config = demo_db
    app = _app(DRIFT, db, monkeypatch)
    assert "4 open drop(s); 0 recovered; over 8 runs." in app.error[0].value
    assert "(simulated)" in app.warning[0].value
    table = app.dataframe[0].value
    assert len(table) == 4 and set(table["cause"]) == {"model update", "server change"}
    assert set(table.loc[table["cause"] == "server change", "change point"]) == {config.description_change}
    assert list(table.columns) == ["change point", "case", "cause", "change", "pass rate", "q", "model"]
    overview, timeline = (json.loads(chart.proto.spec) for chart in app.get("plotly_chart"))
    rows = overview["data"][0]["y"]
    assert len(rows) == 3 * 28 and all(" (simulated) · " in row for row in rows)
    assert len(overview["data"][1]["x"]) == 4  # one marker per change point
    # changed pairs come first in the picker; the first one's timeline shows its change point, before/after rates and the run that found it
    model, case = app.selectbox(key="drift_pair").value
    assert (table["case"] == case).any()
    names = [trace.get("name") for trace in timeline["data"]]
    assert names[0] == "pass rate" and {"before the change point", "after the change point", "drop found"} <= set(names)
    assert any(shape.get("type") == "line" for shape in timeline["layout"]["shapes"])  # the change point
    assert app.query_params["model"] == model and app.query_params["case"] == case
    texts = _texts(app)
    assert any("before " in t and "95% CI" in t and "q = " in t for t in texts)
    assert any("pass rate 100% → " in t and "since" in t for t in texts)


def test_drift_page_deep_link_shows_the_description_diff_and_the_csv_holds_the_evidence(demo_db, monkeypatch):
    import csv
    import io

    from evalcore.behaviour.demo_history import DESCRIPTION_CASE
    from evalcore.dashboard import data as dashboard_data

    db, _ = demo_db
    steady = next(p.model for p in run_points(db) if "assistant-pinned" in p.model)
    app = _app(DRIFT, db, monkeypatch, model=steady, case=DESCRIPTION_CASE)
    assert app.selectbox(key="drift_pair").value == (steady, DESCRIPTION_CASE)
    assert any("changed description of search_knowledge_base" in block.value for block in app.code)
    (next_step,) = [block.value for block in app.code if "evalcore replay-calls" in block.value]  # the experiments that tell the causes apart
    assert "evalcore run --replay-run " in next_step and f"--models {steady}" in next_step and "--server reference-v2 " in next_step
    rows = list(csv.DictReader(io.StringIO(dashboard_data.changes_csv(dashboard_data.drift(db, None)[1]))))
    server = next(r for r in rows if r["cause"] == "server")
    assert "+" in server["description_diff"] and "changed description of search_knowledge_base" in server["evidence"]
    model = next(r for r in rows if r["cause"] == "model")
    assert re.search(r"model version: \S* ?sim-latest-2026-05 -> \S* ?sim-latest-2026-11", model["evidence"]) and model["q_value"]


def test_drift_pages_suggested_commands_run_as_shown(demo_db, monkeypatch, tmp_path):
    """The page's two experiments, run as typed (on a copy of the store): the replayed run, then the recorded calls sent to
    the demo's server after its description change, started again by name (the run's own port is long gone)."""
    import shlex
    import shutil
    import subprocess
    import sys

    from evalcore.behaviour.demo_history import DESCRIPTION_CASE

    db, _ = demo_db
    steady = next(p.model for p in run_points(db) if "assistant-pinned" in p.model)
    app = _app(DRIFT, db, monkeypatch, model=steady, case=DESCRIPTION_CASE)
    (next_step,) = [block.value for block in app.code if "evalcore replay-calls" in block.value]
    copy = tmp_path / "copy.duckdb"
    shutil.copy(db, copy)
    commands = [line for line in next_step.splitlines() if line.startswith("evalcore ")]
    assert len(commands) == 2 and all(shlex.quote(str(db)) in line for line in commands)
    done = []
    for line in commands:
        words = shlex.split(line.replace(shlex.quote(str(db)), shlex.quote(str(copy))))
        done.append(subprocess.run([sys.executable, "-m", *words], cwd=ROOT, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL))
    replayed, calls = done
    assert replayed.returncode in (0, 1) and "replay" in replayed.stdout, replayed.stdout + replayed.stderr  # a gate verdict, not a usage error
    assert calls.returncode == 1, calls.stdout + calls.stderr  # the description changed: a difference, not an unreachable server
    assert "cannot reach" not in calls.stdout + calls.stderr
    assert "tools/list: changed" in calls.stdout and "search_knowledge_base: description" in calls.stdout and " 0 errored" in calls.stdout, calls.stdout


def test_the_demo_opens_on_its_nightly_set_three_models_with_failures_flaky_cases_and_its_drift_flags(demo_db, monkeypatch):
    """The home page of a fresh demo is its richest set: the baseline and the two scripted models side by side, some
    cells failed, the open drift drops named; the Flaky cases and Latency pages have something to show on the same scope."""
    db, _ = demo_db
    app = _app(HOME, db, monkeypatch)
    assert app.query_params["golden"] == "golden/tasks.yaml"
    matrix = app.get("html")[0].proto.body
    labels = ["sim/lexical (simulated)", "sim/script:assistant-latest.yaml (simulated)", "sim/script:assistant-pinned.yaml (simulated)"]
    assert re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', matrix) == labels
    assert len(set(re.findall(r'data-case="([^"]+)"', matrix))) == 28
    flags = [w.value for w in app.warning if w.value.startswith("Drift")]
    assert len(flags) == 1 and "4 open drop" in flags[0] and "kb\\-password\\-reset" in flags[0] and "calendar\\-day" in flags[0]
    flaky = _app(FLAKY, db, monkeypatch)
    assert not [i.value for i in flaky.info if "No flaky cases" in i.value] and len(flaky.dataframe[0].value) > 0
    latency = _app(LATENCY, db, monkeypatch)
    assert len(latency.dataframe[0].value) == 3  # one row per model


def test_drift_page_keeps_the_users_pick_over_the_url(demo_db, monkeypatch):
    from evalcore.behaviour.demo_history import DESCRIPTION_CASE

    db, _ = demo_db
    steady = next(p.model for p in run_points(db) if "assistant-pinned" in p.model)
    app = _app(DRIFT, db, monkeypatch)
    first = app.selectbox(key="drift_pair").value
    wanted = (steady, DESCRIPTION_CASE) if first != (steady, DESCRIPTION_CASE) else (steady, "calendar-day")
    app.selectbox(key="drift_pair").set_value(wanted).run(timeout=120)
    assert app.selectbox(key="drift_pair").value == wanted  # the URL still named the first pair on this rerun
    app.run(timeout=120)
    assert app.selectbox(key="drift_pair").value == wanted and app.query_params["case"] == wanted[1]


def test_drift_page_says_what_it_will_show_before_there_is_enough_history(store, monkeypatch):
    app = _app(DRIFT, store.db, monkeypatch)
    assert "Drift needs at least 4" in app.info[0].value  # 2 runs before a change point and 2 after
    assert not app.get("plotly_chart")


def test_home_with_only_conformance_runs_shows_layer0(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    record_conformance_run(db, conformance_report(target="http://a/mcp", passed_check=False))
    app = _app(HOME, db, monkeypatch)
    assert "No behaviour runs" in app.info[0].value
    runs, checks, requirements = app.dataframe
    assert list(runs.value["target"]) == ["http://a/mcp"]
    assert set(checks.value["verdict"]) == {"pass", "fail"}
    # The official requirement set's scenarios, judged by the run's two checks: failed, partly tested, not run, missing.
    verdict = dict(zip(requirements.value["official scenario"], requirements.value["verdict"], strict=True))
    assert len(verdict) == 50 and verdict["http-header-validation"] == "FAIL" and verdict["server-stateless"] == "partly"
    assert verdict["caching"] == "not run" and verdict["tasks-lifecycle"] == "missing"
    assert verdict["tools-call-with-progress"] == "not run" and verdict["input-required-result-tampered-state"] == "beyond spec"
    assert not app.sidebar.selectbox  # no behaviour runs: no filters to offer
    assert "NOT conformant" in app.selectbox[0].value


def test_home_shows_matrix_layer0_verdict_summary_and_simulated_labels(store, monkeypatch):
    app = _app(HOME, store.db, monkeypatch)
    verdicts = [e.value for e in (*app.success, *app.error) if e.value.startswith("Layer 0 (conformance) of this server:")]
    assert len(verdicts) == 1 and "run " in verdicts[0]  # stated once for the server, not a column on every case row
    assert "(simulated)" in app.warning[0].value
    assert not app.get("plotly_chart")  # the matrix is a table: the page loads no chart library before it shows
    matrix = app.get("html")[0].proto.body
    assert re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', matrix) == [_shown(store.steady), _shown(store.wrong)]
    assert 'data-case="customer-then-ticket"' in matrix
    summary = app.dataframe[0].value
    assert set(summary["model"]) == {_shown(store.steady), _shown(store.wrong)}  # tables show the charts' short labels
    # the default drill-down: first model, first case; the URL carries it
    assert app.query_params["model"] == sorted([store.steady, store.wrong])[0]
    assert app.query_params["case"] == "customer-then-ticket"


def test_deep_link_opens_the_drill_down_of_one_cell(store, monkeypatch):
    app = _app(HOME, store.db, monkeypatch, model=store.steady, case="weather-paris")
    assert app.selectbox(key="drill_model").value == store.steady and app.selectbox(key="drill_case").value == "weather-paris"
    assert any("weather-paris" in t and "4/5 passed" in t and "pass^k 0.00" in t for t in _texts(app))
    codes = [c.value for c in app.code]
    assert "What's the weather in Paris?" in codes  # the prompt
    assert any("tool: get_weather" in c and "Paris" in c for c in codes)  # expected, from the golden file
    assert sum("Lyon" in c for c in codes) >= 2  # attempt 3's call and the server's answer
    options = app.selectbox(key=f"matrix_drill_{store.steady}_weather-paris_attempt").options
    assert options == [f"attempt {n} · {'FAIL' if n == 3 else 'PASS'}" for n in range(1, 6)]
    # the failing attempt opens beside a passing one, each as a conversation
    assert [e.value for e in app.error if e.value.startswith("Attempt ")] == ["Attempt 3: FAIL"]
    assert [e.value for e in app.success if e.value.startswith("Attempt ")] == ["Attempt 1: PASS"]
    assert any("get_weather" in c and "Lyon" in c for c in codes)  # attempt 3's actual call beside the expected one
    assert not any("_meta" in c for c in codes)  # protocol bookkeeping folded out of tool results


def test_choosing_a_cell_with_the_selectboxes_updates_the_url(store, monkeypatch):
    app = _app(HOME, store.db, monkeypatch, model=store.wrong, case="weather-paris")
    app.selectbox(key="drill_case").set_value("say-hello").run(timeout=120)
    assert not app.exception
    assert app.query_params["case"] == "say-hello" and app.query_params["model"] == store.wrong
    assert any("say-hello" in t and "0/5 passed" in t for t in _texts(app))


def test_run_and_model_filters_narrow_the_matrix(store, monkeypatch):
    app = _app(HOME, store.db, monkeypatch, run=store.old_run_id)
    assert app.sidebar.selectbox(key="filter_run").value == store.old_run_id
    assert app.selectbox(key="drill_model").options == ["sim/script:steady.yaml (simulated)"]
    app = _app(HOME, store.db, monkeypatch)
    app.sidebar.multiselect(key="filter_models").set_value([store.wrong]).run(timeout=120)
    assert not app.exception
    assert set(app.dataframe[0].value["model"]) == {_shown(store.wrong)}
    app.sidebar.multiselect(key="filter_kinds").set_value(["hard"]).run(timeout=120)
    assert app.selectbox(key="drill_case").options == ["weather-paris"]
    server = app.sidebar.selectbox(key="filter_server")
    assert server.options[0] == widgets.ALL and server.options[1].startswith("evalcore")
    server.set_value(server.options[1]).run(timeout=120)
    assert not app.exception and set(app.dataframe[0].value["model"]) == {_shown(store.wrong)}


def test_clicked_cell_reads_the_model_and_case_from_a_selection_event():
    event = {"selection": {"points": [{"x": "m (simulated)", "y": "case-1", "customdata": ["m", "case-1", "run", 0.0, "—"]}]}}
    assert widgets.clicked_cell(event) == ("m", "case-1")
    assert widgets.clicked_cell({"selection": {"points": []}}) is None
    assert widgets.clicked_cell(None) is None


def test_hostile_text_from_servers_and_models_is_shown_verbatim_never_as_markup(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    write_synthetic_run(db, "run-1", date(2026, 3, 1), {"case-a": [True, False, True]}, final_text=HOSTILE)
    for page in (HOME, FLAKY):
        app = _app(page, db, monkeypatch, model="sim/fake", case="case-a")
        codes = [c.value for c in app.code]
        assert HOSTILE in codes  # the final answer, verbatim
        assert any(HOSTILE in c for c in codes if c != HOSTILE)  # the tool call arguments and reasons
        markup = _rendered_as_markup(app)
        assert "alert(" not in markup and "**bold**" not in markup and "bold" not in markup
        assert not [html for html in app.get("html") if "<script" in html.proto.body or "<img" in html.proto.body]  # the matrix's table only


def test_latency_and_cost_page(store, monkeypatch):
    app = _app(LATENCY, store.db, monkeypatch)
    assert len(app.get("plotly_chart")) == 3  # sim models have no price: their cost charts are a sentence instead
    per_model, per_call, per_tool, over_time = (frame.value for frame in app.dataframe)
    assert set(per_model["model"]) == set(per_call["model"]) == {_shown(store.steady), _shown(store.wrong)}
    assert "get_weather" in set(per_tool["tool"]) and len(over_time) == 3
    app.sidebar.selectbox(key="filter_run").set_value(store.old_run_id).run(timeout=120)
    assert set(app.dataframe[0].value["model"]) == {_shown(store.steady)} and app.query_params["run"] == store.old_run_id


def test_flaky_page_ranks_and_drills_down(store, monkeypatch):
    app = _app(FLAKY, store.db, monkeypatch)
    flaky = app.dataframe[0].value
    assert set(flaky["case_id"]) == {"weather-paris", "customer-then-ticket"}
    pick = app.selectbox(key="flaky_pick")
    weather = next(index for index, option in enumerate(pick.options) if "weather-paris" in option)
    pick.set_value(weather).run(timeout=120)
    assert not app.exception, app.exception
    failed_runs = app.dataframe[1].value
    assert list(failed_runs["run_id"]) == [store.run_id, store.old_run_id] and list(failed_runs["passed"]) == ["4/5", "4/5"]
    assert app.selectbox(key=f"flaky_run_{store.steady}_weather-paris").value == store.run_id
    # the failing attempt of the newest failing run, beside a passing attempt
    assert [e.value for e in app.error if e.value.startswith("Attempt ")] == ["Attempt 3: FAIL"]
    assert [e.value for e in app.success if e.value.startswith("Attempt ")] == ["Attempt 1: PASS"]
    app.selectbox(key=f"flaky_compare_run_{store.steady}_weather-paris").set_value(store.old_run_id).run(timeout=120)
    assert not app.exception and app.selectbox(key=f"flaky_pair_{store.steady}_weather-paris_compare").value == 1


def test_a_selected_row_of_the_flaky_table_opens_its_drill_down(store, monkeypatch):
    app = _app(FLAKY, store.db, monkeypatch)
    flaky = app.dataframe[0].value
    row = len(flaky) - 1  # not the default pick (the flakiest, row 0)
    assert app.selectbox(key="flaky_pick").value == 0
    app.session_state["table_flaky_cases"] = {"selection": {"rows": [row], "columns": []}}
    app.run(timeout=120)
    assert not app.exception
    assert app.selectbox(key="flaky_pick").value == row
    assert f"{flaky['case_id'].iloc[row]} · " in app.selectbox(key="flaky_pick").format_func(row)


def test_a_regression_is_not_flakiness_and_a_coin_flip_ranks_first(tmp_path):
    from datetime import timedelta

    db = tmp_path / "evals.duckdb"
    nights = {
        "regressed": [[True] * 5, [True] * 5, [False] * 5, [False] * 5],  # mixed over time, never within a run
        "coin-flip": [[True, False, True, False, False], [True, True, False, False, True], [True] * 5, [True] * 5],
        "mostly-fine": [[True, True, True, True, False], [True] * 5, [True] * 5, [True] * 5],
    }
    for night in range(4):
        write_synthetic_run(db, f"run-{night}", date(2026, 3, 1) + timedelta(days=night), {case: outcomes[night] for case, outcomes in nights.items()})
    flaky = queries.flaky_cases(db).set_index("case_id")
    assert list(flaky.index) == ["coin-flip", "mostly-fine"]
    assert flaky.loc["coin-flip", "flakiness"] == pytest.approx((0.8 + 0.8 + 0 + 0) / 4)
    assert flaky.loc["mostly-fine", "flakiness"] == pytest.approx(0.4 / 4)
    assert flaky.loc["coin-flip", "failing_runs"] == 2 and flaky.loc["coin-flip", "flaky_runs"] == 2


def test_flaky_page_says_when_nothing_is_flaky(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    write_synthetic_run(db, "run-1", date(2026, 3, 1), {"always": [True, True], "never": [False, False]})
    app = _app(FLAKY, db, monkeypatch)
    assert "No flaky cases" in app.success[0].value


def test_export_page_offers_every_table_and_the_attempts_as_csv_and_parquet(store, monkeypatch):
    app = _app(EXPORT, store.db, monkeypatch)
    assert "45 attempts" in _texts(app)
    buttons = {button.proto.label: button for button in app.get("download_button")}
    assert "Download all attempts as CSV" in buttons and "Download all attempts as Parquet" in buttons
    assert not buttons["Download all attempts as Parquet"].proto.disabled
    assert not buttons["Download the recorded MCP exchanges as Parquet"].proto.disabled  # the runs' recordings, for replay
    tables = ("behaviour_runs", "matrix", "model_summary", "latency_per_model", "latency_per_tool", "latency_over_time", "flaky_cases", "drift_changes")
    for name in (*tables, "conformance_runs"):
        assert f"Download {name} as CSV" in buttons
    app.sidebar.multiselect(key="filter_models").set_value([store.wrong]).run(timeout=120)
    assert "15 attempts" in _texts(app)


def test_matrix_heatmap_figure_and_when_empty():
    frame = pd.DataFrame(
        {
            "model": ["a", "b"],
            "case_id": ["c1", "c1"],
            "run_id": ["r", "r"],
            "passes": [1, 5],
            "runs": [5, 5],
            "pass_rate": [0.2, 1.0],
            "pass_hat_k": [0.0, 1.0],
            "top_failing_reason": ["<b>x</b>", None],
            "simulated": [True, False],
        }
    )
    figure = figures.matrix_heatmap(frame)
    assert list(figure.layout.xaxis.ticktext) == ["a (simulated)", "b"]
    assert figure.data[-1].customdata[0][4] == "&lt;b&gt;x&lt;/b&gt;"
    assert not figures.matrix_heatmap(frame.iloc[0:0]).data
    # one model: the heatmap sits on its label's tick (a category axis drew it a column off)
    single = figures.matrix_heatmap(frame.iloc[0:1])
    ticks = dict(zip(single.layout.xaxis.ticktext, single.layout.xaxis.tickvals, strict=True))
    rates, cells = single.data
    assert list(rates.x) == [ticks["a (simulated)"]] == list(cells.x) and single.layout.xaxis.range == (-0.5, 0.5)


def test_a_cell_that_was_not_run_says_so_in_grey():
    frame = pd.DataFrame(
        {
            "model": ["a", "a", "b"],
            "case_id": ["c1", "c2", "c1"],
            "run_id": "r",
            "passes": [1, 5, 5],
            "runs": 5,
            "pass_rate": [0.2, 1.0, 1.0],
            "pass_hat_k": [0.0, 1.0, 1.0],
            "top_failing_reason": None,
            "simulated": False,
        }
    )
    not_run, rates, _ = figures.matrix_heatmap(frame).data
    assert not_run.name == figures.NOT_RUN and list(not_run.y) == ["c2", "c1"]
    assert [list(row) for row in not_run.text] == [["", figures.NOT_RUN], ["", ""]]  # b never ran c2
    assert [list(row) for row in not_run.z] == [[None, 1.0], [None, None]]
    assert len(figures.matrix_heatmap(frame.iloc[[0, 2]]).data) == 2  # every cell ran: no grey layer


def test_a_cell_whose_attempts_all_errored_reads_k_errored_not_not_run():
    frame = matrix_frame(top_failing_reason=None, simulated=False)
    grey, _, cells = figures.matrix_heatmap(frame).data
    # rows c2, c1 (top first); columns a, b: a's c1 errored (dark grey), b never ran c2 (light grey)
    assert [list(row) for row in grey.text] == [["", figures.NOT_RUN], ["", ""]]
    assert [list(row) for row in grey.z] == [[None, 1.0], [0.0, None]]
    assert [list(row) for row in grey.customdata] == [["", figures.NOT_RUN_HOVER], [figures.ERRORED_HOVER, ""]]
    assert list(cells.text) == ["5 errored", "3/4 · 1 errored", "5/5"]
    assert widgets.cell_summary({"passes": 0, "runs": 0, "errored": 5}) == "5 errored: none scored"
    assert widgets.cell_summary({"passes": 3, "runs": 4, "errored": 1, "pass_hat_k": 0.0}) == "3/4 passed · pass^k 0.00 · 1 errored"


def test_the_matrix_figure_is_built_unvalidated_yet_as_plotly_would_validate_it():
    """`matrix_heatmap` skips plotly's checks for speed: every property must already be in the form plotly's validation
    gives, so the browser gets what a validated figure would send."""
    frame = pd.DataFrame(
        {
            "model": ["a", "a", "b", "sim/c"],
            "case_id": ["c1", "c2", "c1", "<c3>" + "z" * 300],  # a long one: its texts go as objects, not fixed-width text
            "run_id": "r",
            "passes": [0, 3, 5, 1],
            "runs": [0, 4, 5, 2],
            "attempts": [5, 5, 5, 2],
            "errored": [5, 1, 0, 0],
            "pass_rate": [None, 0.75, 1.0, 0.5],
            "pass_hat_k": [None, 0.0, 1.0, 0.0],
            "top_failing_reason": [None, "<b>x</b>", None, "y" * 400],
            "simulated": [False, False, False, True],
        }
    )
    figure = figures.matrix_heatmap(frame)
    validated = go.Figure(figure.to_dict())
    assert json.loads(pio.to_json(validated, validate=False)) == json.loads(pio.to_json(figure, validate=False))
    assert [trace.type for trace in figure.data] == ["heatmap", "heatmap", "scatter"]


def test_the_demo_banner_counts_the_other_sets_then_the_nights():
    first = "Building the demo history: the Layer 2 and multi-turn sets (1 of 3), then 21 nights. The pages fill in as each lands."
    assert progress.demo_banner(0, 21, 24) == first
    assert progress.demo_banner(3, 21, 24).startswith("Building the demo history: the Layer 2 and multi-turn sets (3 of 3), then 21 nights.")
    assert progress.demo_banner(6, 21, 24).startswith("Building the demo history: night 3 of 21.")


def test_a_sim_script_version_is_shortened_like_its_model_name():
    assert widgets.version_label("sim/script:/tmp/x/demo/drifting.yaml sim-drifting-2026-11") == "sim/script:drifting.yaml sim-drifting-2026-11"
    assert widgets.version_label("gpt-4o-2024-08-06 fp_abc") == "gpt-4o-2024-08-06 fp_abc" and widgets.version_label(None) == "not reported"


def test_a_step_limited_attempt_says_so_first():
    assert widgets.attempt_ending("step_limit", {"turns": [{}] * 8}) == "step limit reached after 8 turns"
    assert widgets.attempt_ending("model_error", {"turns": [{}]}) == "the model call failed after 1 turn"
    assert widgets.attempt_ending("final", {"turns": [{}] * 3}) == ""


def test_model_labels_shorten_script_paths_only_while_unique():
    assert figures.model_label("sim/script:/a/b/steady.yaml", True) == "sim/script:steady.yaml (simulated)"
    assert figures.model_label("openai/gpt-4o", False) == "openai/gpt-4o"
    labels = figures.model_labels({"sim/script:/a/x.yaml": True, "sim/script:/b/x.yaml": True, "sim/script:/b/y.yaml": True})
    assert labels == {
        "sim/script:/a/x.yaml": "sim/script:/a/x.yaml (simulated)",
        "sim/script:/b/x.yaml": "sim/script:/b/x.yaml (simulated)",
        "sim/script:/b/y.yaml": "sim/script:y.yaml (simulated)",
    }


def test_a_selected_row_of_the_model_summary_opens_that_models_drill_down(store, monkeypatch):
    app = _app(HOME, store.db, monkeypatch)
    summary = app.dataframe[0].value
    default = app.selectbox(key="drill_model").value
    row = next(i for i, label in enumerate(summary["model"]) if label != _shown(default))
    chosen = next(model for model in (store.steady, store.wrong) if _shown(model) == summary["model"].iloc[row])
    app.session_state["table_model_summary"] = {"selection": {"rows": [row], "columns": []}}
    app.run(timeout=120)
    assert not app.exception
    assert app.selectbox(key="drill_model").value == chosen != default
    assert app.query_params["model"] == chosen


def test_a_deep_link_to_a_run_that_just_finished_is_honoured_despite_the_cache(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    write_synthetic_run(db, "run-1", date(2026, 3, 1), {"case-a": [True, True]})
    _app(HOME, db, monkeypatch)  # caches the filter choices, which know only run-1
    write_synthetic_run(db, "run-2", date(2026, 3, 2), {"case-a": [False, False]})
    app = _app(HOME, db, monkeypatch, run="run-2")
    assert app.sidebar.selectbox(key="filter_run").value == "run-2"
    assert app.query_params["run"] == "run-2"


def test_the_matrix_says_when_a_run_it_shows_is_still_running_or_crashed(tmp_path, monkeypatch):
    import duckdb

    db = tmp_path / "evals.duckdb"
    write_synthetic_run(db, "run-1", date(2026, 3, 1), {"case-a": [True, True]})
    app = _app(HOME, db, monkeypatch)
    assert not any("still running" in e.value for e in app.info)
    with duckdb.connect(str(db)) as connection:  # as a run in progress leaves it: attempts stored, not finished
        connection.execute("UPDATE behaviour_runs SET status = 'running' WHERE run_id = 'run-1'")
    st.cache_data.clear()  # what the page's 10 s cache does by itself
    app = _app(HOME, db, monkeypatch)
    assert any("Run run-1 is still running" in e.value for e in app.info)
    with duckdb.connect(str(db)) as connection:  # its process is gone: a crash, not a run in progress
        connection.execute("UPDATE behaviour_runs SET pid = 999999999 WHERE run_id = 'run-1'")
    st.cache_data.clear()
    app = _app(HOME, db, monkeypatch)
    assert not any("still running" in e.value for e in app.info)
    assert any("Run run-1 crashed" in e.value and "--resume run-1" in e.value for e in app.warning)


def test_drift_figures_give_every_run_its_own_column_even_on_one_date():
    from evalcore.drift import Fingerprints, RunPoint, detect_changes

    day = date(2026, 3, 1)
    fingerprints = Fingerprints("fp", "v1", "h")
    points = [RunPoint("sim/m", "case-a", f"run-{i}-abcde{i}", day, passes, 5, fingerprints, simulated=True) for i, passes in enumerate([5, 5, 5, 5, 0, 0])]
    changes = detect_changes(points)
    assert len(changes) == 1
    overview = figures.drift_overview(points, changes)
    heatmap, markers = overview.data
    assert list(heatmap.x) == [0, 1, 2, 3, 4, 5] and list(heatmap.z[0]) == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert list(markers.x) == [4]  # the marker sits on the first run after the change point
    assert len(set(overview.layout.xaxis.ticktext)) == 6 and all(t.startswith("2026-03-01 ·") for t in overview.layout.xaxis.ticktext)
    timeline = figures.drift_timeline(points, changes, "sim/m · case-a")
    assert list(timeline.data[0].x) == [0, 1, 2, 3, 4, 5]
    found = next(trace for trace in timeline.data if trace.name == "drop found")
    assert list(found.x) == [4]  # flagged (provisionally) by the first run after it, and confirmed by the second
    assert timeline.layout.shapes[0].x0 == 3.5  # the change point, between the last good run and the first after


def test_tables_show_every_rate_with_one_decimal_and_token_counts_whole():
    frame = pd.DataFrame({"pass_rate": [0.9, 0.9571], "input_tokens_per_attempt": [12345.6, 7.2], "passes": [3, 4]})
    shown = widgets._shown_numbers(frame)
    assert list(shown["pass_rate"]) == pytest.approx([90.0, 95.71]) and list(shown["input_tokens_per_attempt"]) == [12346.0, 7.0]
    assert list(shown["passes"]) == [3, 4] and list(frame["pass_rate"]) == [0.9, 0.9571]  # the CSV's frame is untouched
    assert widgets.column_config(frame)["input_tokens_per_attempt"]["type_config"]["format"] == "localized"


def test_tables_show_headings_in_words_and_formatted_numbers():
    assert widgets.column_heading("latency_p50_ms") == "Latency p50 (ms)"
    assert widgets.column_heading("pass_hat_k") == "Pass^k" and widgets.column_heading("run_id") == "Run ID"
    frame = pd.DataFrame({"pass_rate": [0.5], "cost_per_correct_usd": [0.001], "passes": [3], "simulated": [True], "model": ["m"]})
    config = widgets.column_config(frame)
    assert config["pass_rate"]["type_config"]["format"] == "%.1f%%" and config["pass_rate"]["label"] == "Pass rate"
    assert config["cost_per_correct_usd"]["type_config"]["type"] == "text" and config["passes"]["type_config"]["format"] == "%d"
    assert config["simulated"]["type_config"]["type"] == "checkbox"
    # counts summed in SQL arrive as floats and still read as whole numbers; dates read as dates
    dated = pd.DataFrame({"retries": [30.0, 2.0], "flaky_runs": [11.0, None], "tokens_per_attempt": [1.5, 2.0], "run_date": pd.to_datetime(["2026-11-13"] * 2)})
    config = widgets.column_config(dated)
    assert config["retries"]["type_config"]["format"] == "%d" and config["flaky_runs"]["type_config"]["format"] == "%d"
    assert config["tokens_per_attempt"]["type_config"]["format"] == "localized"  # whole, with thousands separators
    assert (config["run_date"]["type_config"]["type"], config["run_date"]["type_config"]["format"]) == ("date", "YYYY-MM-DD")


def test_cost_chart_names_the_models_without_a_price_instead_of_an_empty_axis():
    frame = pd.DataFrame(
        {
            "model": ["openai/gpt-x", "local/llama"],
            "simulated": [False, False],
            "cost_per_attempt_usd": [0.002, None],
            "cost_per_correct_usd": [0.004, None],
        }
    )
    figure = figures.cost_chart(frame)
    assert list(figure.data[0].x) == ["openai/gpt-x"] and figure.layout.title.text == "Cost"  # the title is never cut by a list of names
    assert figures.unpriced_models(frame) == ["local/llama"]
    assert not figures.cost_chart(frame.iloc[1:]).data
    simulated = pd.DataFrame({"model": ["sim/script:/tmp/x/steady.yaml"], "simulated": [True], "cost_per_attempt_usd": [0.0], "cost_per_correct_usd": [0.0]})
    assert figures.unpriced_models(simulated) == ["sim/script:steady.yaml (simulated)"]  # a sim model's 0.0 is no price, not a price of zero
    assert not figures.cost_chart(simulated).data
    assert figures.no_price_sentence(["a", "b"]) == "No price for a, b: cost is never guessed, so it is not drawn."
    assert widgets.cost_text(0.0, True) == "no price" and widgets.cost_text(None, False) == "no price" and widgets.cost_text(0.00123, False) == "0.00123"


def test_over_time_legends_sit_below_and_the_chart_grows_with_them():
    models = [f"sim/m{n}" for n in range(6)]
    frame = pd.DataFrame(
        {
            "model": [m for m in models for _ in range(2)],
            "simulated": True,
            "run_date": [pd.Timestamp("2026-03-01"), pd.Timestamp("2026-03-02")] * len(models),
            "latency_p50_ms": 10.0,
            "latency_p95_ms": 20.0,
            "cost_per_correct_usd": 0.0,
        }
    )
    figure = figures.latency_chart(frame)
    assert len(figure.data) == 12 and figure.layout.legend.orientation == "h" and figure.layout.legend.y < 0
    assert figure.layout.height > figures.latency_chart(frame[frame["model"] == models[0]]).layout.height


def test_latency_page_says_no_price_instead_of_empty_cost_charts(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    write_synthetic_run(db, "run-1", date(2026, 3, 1), {"case-a": [True, False]})  # a sim model: no price
    app = _app(LATENCY, db, monkeypatch)
    assert len(app.get("plotly_chart")) == 3  # latency per model, per tool, over time; no cost chart without a price
    sentence = figures.no_price_sentence([_shown("sim/fake")])
    assert [info.value for info in app.info] == [widgets.literal_label(sentence)] * 2  # per model and over time
    shown = [frame.value for frame in app.dataframe]
    assert list(shown[0]["cost_per_attempt_usd"]) == ["no price"] and list(shown[-1]["cost_per_correct_usd"]) == ["no price"]  # per model, over time


def test_the_dashboard_watches_no_source_files():
    """With the .venv inside the project, Streamlit's file watcher took every library a page loads for the app's own
    code and watched it, holding the first page back 1-2 s: `evalcore dashboard` turns it off."""
    command = streamlit_command(8501)
    assert command[command.index("--server.fileWatcherType") + 1] == "none"


def test_over_time_charts_of_one_date_tick_by_date():
    """One run date: the axis reads the date, never "23:59:59.999 ... 00:00:00.0005"."""
    frame = pd.DataFrame(
        {"run_date": [date(2026, 11, 30)], "model": ["openai/x"], "simulated": [False], "latency_p50_ms": [10.0], "latency_p95_ms": [20.0]}
        | {"cost_per_attempt_usd": [0.01], "cost_per_correct_usd": [0.02]}
    )
    for figure in (figures.latency_chart(frame), figures.cost_chart(frame)):
        axis = figure.layout.xaxis
        assert (axis.type, axis.tickformat, axis.dtick) == ("date", "%Y-%m-%d", 86_400_000)
