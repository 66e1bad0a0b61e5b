"""Dashboard page "Runs": every stored run with its status, filtered by model, golden set, kind, date and status; one
picked run opens in the matrix, two open side by side on the Compare page. The URL carries the filters and the pick."""

from __future__ import annotations

import streamlit as st

from evalcore.dashboard import data, widgets
from evalcore.dashboard.queries import RUN_KINDS, RunFilters
from evalcore.run_kinds import KIND_LABELS, RUN_STATUSES

COMPARE_PAGE = "pages/7_Compare.py"

st.set_page_config(page_title="evalcore — runs", layout="wide")
st.title("Runs")
st.caption(
    "Status comes from each run's stored gate: green (the gate passed and the run may be a baseline), passed, not green (a case gate "
    "unmet, or errored attempts accepted), gate failed (a regression), incomplete (errored attempts: nothing was measured for them), "
    "not green: no baseline yet (nothing to compare with, and the run cannot be one), or running, crashed, failed, cancelled (the run "
    "never finished). Kind: a run or merged shards stand for the server; an arm of `compare` or `perturb` and a replay never do "
    "(never a baseline, never in drift or the Matrix's default view)."
)

db = data.db_path()
every = data.run_list(db, RunFilters())
if every.empty:
    widgets.empty_state(db)
    st.stop()

sidebar = st.sidebar
sidebar.header("Filters")
choices = {"models": data.run_models(db), "golden": sorted(every["golden_path"].unique()), "kind": list(RUN_KINDS), "status": list(RUN_STATUSES)}
labels = {"models": "Models", "golden": "Golden sets", "kind": "Kind", "status": "Status"}
chosen = {}
for param, options in choices.items():
    widgets.from_url(f"runs_{param}", param, options, many=True)
    chosen[param] = sidebar.multiselect(labels[param], options, key=f"runs_{param}", placeholder="all")
    widgets.to_url(f"runs_{param}", param, chosen[param])
dates = sorted(every["run_date"].map(lambda day: day.date() if hasattr(day, "date") else day))
date_from, date_to = widgets.date_range("runs_dates", [dates[0], dates[-1]])
filters = RunFilters(tuple(chosen["models"]), tuple(chosen["golden"]), tuple(chosen["kind"]), tuple(chosen["status"]), date_from, date_to)
shown = data.run_list(db, filters)

st.text(f"{len(shown)} of {len(every)} runs")
st.caption("Pick one run to open it in the matrix, or two to open them side by side.")
run_ids = list(shown["run_id"])
picked_rows = widgets.table_rows(shown, "runs")
clicked = [run_ids[row] for row in picked_rows]
if clicked and clicked != st.session_state.get("_runs_clicked"):  # a new pick in the table, not the one kept across reruns
    st.session_state["_runs_clicked"] = clicked
    st.session_state["runs_picked"] = clicked[-2:]
widgets.from_url("runs_picked", "runs", list(every["run_id"]), many=True)
picked = st.multiselect("Runs picked", list(every["run_id"]), key="runs_picked", max_selections=2, placeholder="pick in the table, or here")
widgets.to_url("runs_picked", "runs", picked)
by_id = every.set_index("run_id")
if len(picked) == 2:
    # An arm of `evalcore compare` keeps its role; otherwise the older run is the baseline.
    role = {KIND_LABELS["compare-baseline"]: 0, KIND_LABELS["compare-candidate"]: 2, KIND_LABELS["perturb-arm"]: 2}
    older, newer = sorted(picked, key=lambda run_id: (role.get(str(by_id.loc[run_id, "kind"]), 1), by_id.loc[run_id, "started_at"], run_id))
    st.text(f"baseline {older} · candidate {newer}")
    if st.button("Compare these two runs", type="primary", key="compare_picked"):
        st.switch_page(COMPARE_PAGE, query_params={"baseline": older, "candidate": newer})
elif len(picked) == 1 and st.button("Open this run in the matrix", key="open_picked"):
    st.switch_page(widgets.MATRIX_PAGE, query_params={"run": picked[0], "golden": str(by_id.loc[picked[0], "golden_path"])})
