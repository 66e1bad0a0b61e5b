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
widgets.table(flaky, "flaky_cases")

st.subheader("Drill-down (the case's latest run)")
labels = {
    f"{figures.model_label(str(r.model), bool(r.simulated))} · {r.case_id} · {int(r.passes)}/{int(r.runs)}": (str(r.model), str(r.case_id), str(r.last_run_id))
    for r in flaky.itertuples(index=False)
}
model, case, run_id = labels[st.selectbox("Model · case · passes", list(labels), key="flaky_pick")]
attempts = data.attempts(db, run_id, model, case)
st.text(f"run {run_id}")
golden_path = str(attempts["golden_path"].iloc[0]) if not attempts.empty else ""
widgets.attempt_columns(attempts, data.expected_behaviour(golden_path, case) if golden_path else None)
