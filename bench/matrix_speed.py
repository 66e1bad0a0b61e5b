"""Benchmark: the dashboard's home page work on a large store: `queries.matrix`, `matrix_grid.matrix_html`, `st.html`.

Builds a DuckDB file with 1,000,000 synthetic attempts (100 runs x 10 models x
200 cases x 5 attempts, generated in SQL with `range()`), each run with its
stored metrics and matrix cells as a finished run has them, then times the matrix
query (each model's newest run: 10 x 200 cells), the matrix table's build (the
home page draws the matrix as an HTML table) and what the page then pays to
hand it to Streamlit (`st.html`), and prints the median of several repetitions
with the load average. Every run holds the same attempts
(their outcomes vary within a run, not between runs), so the first run is
finished as the runner finishes a run (`build_report` over its attempt records,
`store.finish_run`) and its stored rows are copied for every other run. Streamlit
runs in its bare mode. A second line times the same cells as the plotly heatmap
the Compare page draws (`figures.matrix_heatmap`) and what `st.plotly_chart` does
to it on every render (plotly's `to_dict`, which deep-copies every array, its JSON
encoding, and the element id's hash). `--no-cells` drops the
stored cells, so the matrix is read from the attempts as for a store written
before them. Run:
`.venv/bin/python bench/matrix_speed.py [--attempts N] [--repeat N] [--keep PATH] [--no-cells]`.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamlit as st  # noqa: E402
from streamlit import config as streamlit_config  # noqa: E402

from evalcore.behaviour.report import build_report  # noqa: E402
from evalcore.dashboard import matrix_grid, queries  # noqa: E402
from evalcore.dashboard.figures import matrix_heatmap  # noqa: E402
from evalcore.golden.model import GoldenCase, GoldenSet  # noqa: E402
from evalcore.models.types import ModelSpec  # noqa: E402
from evalcore.store import behaviour as store  # noqa: E402
from evalcore.store.behaviour import CELL_COLUMNS  # noqa: E402
from evalcore.store.db import connect  # noqa: E402

MODELS = 10
CASES = 200
ATTEMPTS_PER_CASE = 5
PER_RUN = MODELS * CASES * ATTEMPTS_PER_CASE

RUNS_SQL = """
INSERT INTO behaviour_runs (run_id, started_at, finished_at, status, run_date, golden_path, golden_hash, server_target, server_name,
    server_fingerprint, server_tools_json, models_json, runs, config_json, evalcore_version)
SELECT printf('run-%04d', r), TIMESTAMPTZ '2026-01-01 02:00:00+00' + to_days(r::INTEGER), TIMESTAMPTZ '2026-01-01 03:00:00+00' + to_days(r::INTEGER),
    'complete', DATE '2026-01-01' + r::INTEGER, 'golden/tasks.yaml', 'g', 'http://127.0.0.1:8765/mcp', 'bench', 'fp', '[]',
    to_json(?::VARCHAR[])::VARCHAR, ?, '{}', 'bench'
FROM range(?) t(r)
"""
ATTEMPTS_SQL = """
INSERT INTO attempts (run_id, model, case_id, attempt, case_hash, case_kind, simulated, model_version, passed, reasons_json, tool_calls_json,
    final_text, stop_reason, error, latency_ms, input_tokens, output_tokens, cost_usd, retries, transcript_json, judge_json, cached_from, recorded_at)
SELECT printf('run-%04d', i // ?), list_extract(?::VARCHAR[], ((i // ?) % ?)::INTEGER + 1), printf('case-%03d', (i // ?) % ?), (i % ?) + 1, 'h',
    CASE WHEN ((i // ?) % ?) % 3 = 0 THEN 'hard' ELSE 'soft' END, (i // ?) % ? < ?, 'v1', hash(i % ?) % 4 <> 0,
    CASE WHEN hash(i % ?) % 4 = 0 THEN '["expected get_weather, called no tool"]' ELSE '[]' END,
    '[{"id": "c", "name": "get_weather", "arguments": {"city": "Paris"}}]', 'text', 'final', NULL, (hash(i % ?) % 2000)::DOUBLE, 300, 40, 0.0001, 0,
    '{"messages": [], "executions": []}', NULL, NULL, TIMESTAMPTZ '2026-01-01 00:00:00+00'
FROM range(?) t(i)
"""
# Two scores per attempt (selection, arguments), as a run of today's scorers writes them.
SCORES_SQL = """
INSERT INTO attempt_scores (run_id, model, case_id, attempt, scorer, value, applies, reason, label)
SELECT run_id, model, case_id, attempt, 'selection', CASE WHEN passed THEN 1.0 ELSE 0.0 END, true, NULL, NULL FROM attempts
UNION ALL SELECT run_id, model, case_id, attempt, 'arguments', CASE WHEN hash(attempt) % 7 <> 0 THEN 1.0 ELSE 0.0 END, true, NULL, NULL FROM attempts
"""
# The first run's stored metrics and matrix cells, for every other run, written run after run as finished runs write them.
COPY_METRICS_SQL = """
INSERT INTO run_metrics (run_id, scope, model, case_id, metric, value)
SELECT r.run_id, m.scope, m.model, m.case_id, m.metric, m.value
FROM behaviour_runs r, run_metrics m WHERE m.run_id = ? AND r.run_id <> ?
ORDER BY r.run_id, m.rowid
"""
COPY_CELLS_SQL = f"""
INSERT INTO case_cells ({CELL_COLUMNS})
SELECT r.run_id, {", ".join("c." + name for name in CELL_COLUMNS.split(", ")[1:])}
FROM behaviour_runs r, case_cells c WHERE c.run_id = ? AND r.run_id <> ?
ORDER BY r.run_id, c.rowid
"""
SIMULATED_MODELS = 2  # the first two models are `sim/` ones, so the figure labels columns "(simulated)" as it does for them
MODEL_NAMES = [f"{'sim/' if m < SIMULATED_MODELS else ''}model-{m:02d}" for m in range(MODELS)]


def build(path: Path, attempts: int) -> None:
    runs = -(-attempts // PER_RUN)
    with connect(path) as connection:
        connection.execute(RUNS_SQL, [MODEL_NAMES, ATTEMPTS_PER_CASE, runs])
        per_model = CASES * ATTEMPTS_PER_CASE
        positions = [PER_RUN, MODEL_NAMES, per_model, MODELS, ATTEMPTS_PER_CASE, CASES, ATTEMPTS_PER_CASE]
        positions += [ATTEMPTS_PER_CASE, CASES, per_model, MODELS, SIMULATED_MODELS]
        connection.execute(ATTEMPTS_SQL, [*positions, PER_RUN, PER_RUN, PER_RUN, attempts])
        connection.execute(SCORES_SQL)
    first = "run-0000"
    finish(path, first)
    with connect(path) as connection:
        connection.execute(COPY_METRICS_SQL, [first, first])
        connection.execute(COPY_CELLS_SQL, [first, first])


def finish(path: Path, run_id: str) -> None:
    """What the runner does at the end of a run (`runner.finish`, without the gate): its report and metrics from its
    attempt records, stored in one write."""
    cases = tuple(GoldenCase(f"case-{c:03d}", "p", "get_weather", {"city": "Paris"}, kind="hard" if c % 3 == 0 else "soft") for c in range(CASES))
    golden = GoldenSet(Path("golden/tasks.yaml"), cases, "g")
    records = store.load_attempt_records(path, run_id)
    report, metric_sets = build_report(store.load_run(path, run_id), golden, records, [ModelSpec(name) for name in MODEL_NAMES])
    store.finish_run(path, report, metric_sets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--attempts", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the store here and keep it (default: a temporary file)")
    parser.add_argument("--no-cells", action="store_true", help="drop the stored matrix cells: time a store written before them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = args.keep or Path(directory) / "bench.duckdb"
        path.unlink(missing_ok=True)
        started = time.perf_counter()
        build(path, args.attempts)
        if args.no_cells:
            with connect(path) as connection:
                connection.execute("DELETE FROM case_cells")
        print(f"built {args.attempts:,} attempts in {time.perf_counter() - started:.1f}s ({path.stat().st_size / 1e6:.0f} MB)")
        # Bare mode (no `streamlit run`) says so once, then warns on every call that there is no script run context.
        streamlit_config.set_option("global.showWarningOnDirectExecution", False)
        logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").disabled = True
        query_s, table_s, html_s, total_s, heatmap_s, chart_s = [], [], [], [], [], []
        cells = 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            frame = queries.matrix(path)
            t1 = time.perf_counter()
            table = matrix_grid.matrix_html(frame, {}, (str(frame["model"].iloc[0]), str(frame["case_id"].iloc[0])))  # as pages/0_Matrix.py
            t2 = time.perf_counter()
            st.html(table)
            t3 = time.perf_counter()
            figure = matrix_heatmap(frame)
            t4 = time.perf_counter()
            st.plotly_chart(figure, on_select="rerun", selection_mode="points", key="matrix", width="stretch")  # as pages/7_Compare.py
            t5 = time.perf_counter()
            query_s.append(t1 - t0)
            table_s.append(t2 - t1)
            html_s.append(t3 - t2)
            total_s.append(t3 - t0)
            heatmap_s.append(t4 - t3)
            chart_s.append(t5 - t4)
            cells = len(frame)
        load = os.getloadavg()[0]

        def ms(values: list[float]) -> str:
            return f"{statistics.median(values) * 1000:.0f} ms"

        print(
            f"matrix over {args.attempts:,} attempts -> {cells:,} cells: query {ms(query_s)} + table {ms(table_s)} + "
            f"st.html {ms(html_s)} = {ms(total_s)} (median of {args.repeat}), "
            f"load average {load:.2f}{'' if load <= 4 else ': NOT for publishing (load above 4)'}"
        )
        print(f"the same cells as the Compare page's heatmap: figure {ms(heatmap_s)} + st.plotly_chart {ms(chart_s)}")


if __name__ == "__main__":
    main()
