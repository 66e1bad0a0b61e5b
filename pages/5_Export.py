"""Dashboard page: every table as CSV, and the filtered attempts as CSV or Parquet."""

from __future__ import annotations

import streamlit as st

from evalcore.dashboard import data, widgets

PREVIEW_ROWS = 200

st.set_page_config(page_title="evalcore — export", layout="wide")
st.title("Export")

db = data.db_path()
options = data.filter_options(db)
conformance = data.conformance_runs(db)
if not options["models"] and conformance.empty:
    widgets.empty_state(db, "runs")
    st.stop()

filters = widgets.sidebar_filters(options, no_run_label=widgets.ALL_RUNS)

st.subheader("Attempts in scope")
st.caption("One row per attempt with its scores and telemetry; transcripts are left out (open them on the Matrix page).")
count = data.attempts_count(db, filters)
st.text(f"{count} attempts")
widgets.table(data.attempts_preview(db, filters, PREVIEW_ROWS), "attempts_preview", label=f"Download this preview (first {PREVIEW_ROWS} rows) as CSV")
widgets.export_downloads("all attempts", "attempts", lambda file_format: data.attempts_export(db, filters, file_format), enabled=count > 0)

st.subheader("Metrics of the runs in scope")
st.caption("Every metric as the run stored it (per case, per model, per run): the numbers the report, the gate and these pages show.")
widgets.export_downloads("the metrics", "metrics", lambda file_format: data.metrics_export(db, filters, file_format), enabled=count > 0)

st.subheader("Recorded MCP exchanges of every run")
st.caption("Each request a behaviour run sent its server and the answer, whole: what `run --replay-run` and `replay-calls` replay.")
widgets.export_downloads("the recorded MCP exchanges", "run_exchanges", lambda file_format: data.exchanges_export(db, file_format), enabled=count > 0)

st.subheader("Comparisons and catalog sweeps")
st.caption("Each verdict row of `evalcore compare` (per model and case, per model) and each sensitivity row of `evalcore perturb`.")
compared, swept = bool(data.stored_comparisons(db)), bool(data.stored_perturbations(db))
widgets.export_downloads("the comparisons", "comparisons", lambda file_format: data.comparisons_export(db, file_format), enabled=compared)
widgets.export_downloads("the catalog sweeps", "perturbations", lambda file_format: data.perturbations_export(db, file_format), enabled=swept)

st.subheader("Tables")
tables = {
    "behaviour_runs": data.runs(db),
    "matrix": data.matrix(db, filters),
    "model_summary": data.model_summary(db, filters),
    "latency_per_model": data.latency(db, filters),
    "latency_per_tool": data.tool_latency(db, filters),
    "latency_over_time": data.latency_over_time(db, filters),
    "flaky_cases": data.flaky_cases(db, filters),
    "drift_changes": data.changes_frame(data.drift(db, filters.golden_path)[1]),
    "conformance_runs": conformance,
}
for name, frame in tables.items():
    with st.expander(f"{name} ({len(frame)} rows)"):
        widgets.table(frame, name)
