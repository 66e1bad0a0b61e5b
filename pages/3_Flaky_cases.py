"""Dashboard page: cases that both pass and fail, flakiest and most recent first, with a drill-down into their attempts."""

from __future__ import annotations

import streamlit as st

from evalcore.dashboard import data, figures, widgets

st.set_page_config(page_title="evalcore — flaky cases", layout="wide")
st.title("Flaky cases")
st.caption("Model × case pairs with 0 < pass rate < 1 across the runs in scope. flakiness = (1 − |2·pass rate − 1|) × 2^(−days since last run / 7).")

db = data.db_path()
options = data.filter_options(db)
if not options["models"]:
    widgets.empty_state(db)
    st.stop()

filters = widgets.sidebar_filters(options, no_run_label=widgets.ALL_RUNS)
flaky = data.flaky_cases(db, filters)
if flaky.empty:
    st.success("No flaky cases in scope: every model × case passed always or never.")
    st.stop()
if bool(flaky["simulated"].any()):
    st.warning("Rows of (simulated) models come from offline `sim/` models.")
st.caption("Click a row to drill into it.")
row = widgets.table(flaky, "flaky_cases", selectable=True)

st.subheader("Drill-down (the case's latest run)")
rows = list(flaky.itertuples(index=False))
if row is not None and st.session_state.get("_applied_row") != row:
    st.session_state["_applied_row"] = row
    st.session_state["flaky_pick"] = row
pick = st.selectbox(
    "Model · case · passes",
    range(len(rows)),
    key="flaky_pick",
    format_func=lambda i: f"{figures.model_label(str(rows[i].model), bool(rows[i].simulated))} · {rows[i].case_id} · {int(rows[i].passes)}/{int(rows[i].runs)}",
)
model, case, run_id = str(rows[pick].model), str(rows[pick].case_id), str(rows[pick].last_run_id)
attempts = data.attempts(db, run_id, model, case)
st.text(f"run {run_id}")
golden_path = str(attempts["golden_path"].iloc[0]) if not attempts.empty else ""
widgets.attempt_columns(attempts, data.expected_behaviour(golden_path, case) if golden_path else None)
