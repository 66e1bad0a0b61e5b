"""Dashboard page: per-case pass-rate timelines per model, with the runs where a case regressed flagged and attributed."""

from __future__ import annotations

import streamlit as st

from evalcore import drift
from evalcore.dashboard import data, figures, widgets

st.set_page_config(page_title="evalcore — drift", layout="wide")
st.title("Drift")
st.caption(
    f"A run is flagged when a case's passes drop against its own previous {drift.WINDOW_RUNS} runs (at least {drift.MIN_WINDOW_RUNS}): "
    f"one-sided Fisher exact test p < {drift.P_THRESHOLD} AND a pass-rate drop of at least {drift.MIN_DROP}. "
    "With 5 attempts a run, one run is weak evidence: confidence = 1 − p says how unlikely the drop is by chance "
    "(5/5 for a week, then 2/5: confidence ≈ 0.999; 3/5: not flagged on p alone)."
)

db = data.db_path()
options = data.filter_options(db)
if not options["models"]:
    widgets.empty_state(db)
    st.stop()

run_counts = data.runs(db)["golden_path"].value_counts()
golden_choices = sorted(options.get("golden_paths", []), key=lambda path: (-int(run_counts.get(path, 0)), str(path)))  # the longest history first
golden = st.sidebar.selectbox("Golden set", golden_choices, key="drift_golden")
points, flags = data.drift(db, str(golden) if golden else None)
models = sorted({p.model for p in points})
chosen_models = st.sidebar.multiselect("Models", models, key="drift_models", placeholder="all models")
if chosen_models:
    points = [p for p in points if p.model in chosen_models]
    flags = [f for f in flags if f.model in chosen_models]
run_count = len({p.run_id for p in points})
if run_count <= drift.MIN_WINDOW_RUNS:
    st.info(
        f"{run_count} complete run(s) of this golden set so far. Drift needs at least {drift.MIN_WINDOW_RUNS + 1}: from then on, each case's newest "
        "run is tested against its own recent history, and a regression shows here with its likely cause (model update, or a change of the "
        "server's tools and descriptions, with the diff)."
    )
    st.stop()
if any(p.simulated for p in points):
    st.warning("Rows labelled (simulated) come from offline `sim/` models: their history is scripted, not a real provider's.")

if flags:
    st.error(f"{len(flags)} regression(s) flagged over {run_count} runs.")
else:
    st.success(f"No regressions over {run_count} runs: no case's pass rate dropped significantly below its recent history.")
widgets.table(data.flags_table(flags), "drift_flags", label="Download the flags as CSV")

st.subheader("Every case over time")
event = st.plotly_chart(figures.drift_overview(points, flags), on_select="rerun", selection_mode="points", key="drift_overview", width="stretch")
clicked = widgets.clicked_cell(event)

st.subheader("One case")
pairs = sorted({(p.model, p.case_id) for p in points})
flagged_first = sorted(pairs, key=lambda pair: (not any((f.model, f.case_id) == pair for f in flags), pair))
wanted = clicked or (st.query_params.get("model"), st.query_params.get("case"))
if wanted in pairs and st.session_state.get("_drift_applied") != wanted:
    st.session_state["_drift_applied"] = wanted
    st.session_state["drift_pair"] = wanted
simulated = {p.model: p.simulated for p in points}
model, case = st.selectbox(
    "Model · case (flagged first)", flagged_first, key="drift_pair", format_func=lambda pair: f"{figures.model_label(pair[0], simulated[pair[0]])} · {pair[1]}"
)
st.query_params["model"], st.query_params["case"] = model, case
timeline = drift.case_timelines(points, flags).get((model, case), [])
st.plotly_chart(figures.drift_timeline(timeline, f"{model} · {case}"), width="stretch")
for point in timeline:
    if point.flag is not None:
        flag = point.flag
        st.text(
            f"{flag.run_date} · run {flag.run_id}: {flag.before_passes}/{flag.before_runs} before -> {flag.after_passes}/{flag.after_runs}, "
            f"p = {flag.p_value:.2g}, confidence {flag.confidence:.4f} · {flag.attribution}"
        )
        widgets.show_text("Why (fingerprints compared with the run before; a description diff comes from the server)", flag.detail)
