"""Dashboard page: cases inconsistent within a run, flakiest first; the runs in which one failed, and a failing attempt beside a passing one."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore.dashboard import data, figures, widgets

st.set_page_config(page_title="evalcore — flaky cases", layout="wide")
st.title("Flaky cases")
st.caption(
    "Model × case pairs whose attempts disagreed within a run. flakiness = the mean over its runs of 1 − |2·p − 1|, p being the run's pass rate: "
    "1 for a coin flip in every run, 0 when every run's attempts agreed. A case that went from always passing to always failing is a regression, "
    "not flakiness: see the Drift page."
)

db = data.db_path()
options = data.filter_options(db)
if not options["models"]:
    widgets.empty_state(db)
    st.stop()

filters = widgets.sidebar_filters(options, no_run_label=widgets.ALL_RUNS)
flaky = data.flaky_cases(db, filters)
if flaky.empty:
    st.success("No flaky cases in scope: in every run, a case's attempts all passed or all failed.")
    st.stop()
if bool(flaky["simulated"].any()):
    st.warning("Rows of (simulated) models come from offline `sim/` models.")
st.caption("Click a row to drill into it.")
row = widgets.table(flaky, "flaky_cases", selectable=True)

st.subheader("Drill-down")
rows = list(flaky.itertuples(index=False))
pairs = [(str(r.model), str(r.case_id)) for r in rows]
wanted = (st.query_params.get("model"), st.query_params.get("case"))
if wanted in pairs and st.session_state.get("_flaky_from_url") != wanted:  # a shared link: applied once, then the picker is the user's
    st.session_state["_flaky_from_url"] = wanted
    st.session_state["flaky_pick"] = pairs.index(wanted)
if row is not None and st.session_state.get("_applied_row") != row:
    st.session_state["_applied_row"] = row
    st.session_state["flaky_pick"] = row
pick = st.selectbox(
    "Model · case · passes",
    range(len(rows)),
    key="flaky_pick",
    format_func=lambda i: f"{figures.model_label(str(rows[i].model), bool(rows[i].simulated))} · {rows[i].case_id} · {int(rows[i].passes)}/{int(rows[i].runs)}",
)
model, case = str(rows[pick].model), str(rows[pick].case_id)
st.query_params["model"], st.query_params["case"] = model, case
st.session_state["_flaky_from_url"] = (model, case)
runs = data.pair_runs(db, model, case, filters)
failed = runs[runs["passes"] < runs["runs"]]
st.caption(f"Runs in which {case} failed at least once ({len(failed)} of {len(runs)}), newest first.")
shown = failed.assign(passed=[f"{int(p)}/{int(n)}" for p, n in zip(failed["passes"], failed["runs"], strict=True)])
widgets.table(shown[["run_date", "run_id", "passed", "flaky"]], "flaky_runs")
run_ids = list(runs["run_id"])
failing_first = [r for r in run_ids if r in set(failed["run_id"])] + [r for r in run_ids if r not in set(failed["run_id"])]
run_label = {str(r.run_id): f"{pd.Timestamp(r.run_date):%Y-%m-%d} · {r.run_id} · {int(r.passes)}/{int(r.runs)}" for r in runs.itertuples(index=False)}
left, right = st.columns(2)
failing_run = left.selectbox("Run with a failing attempt", failing_first, format_func=run_label.__getitem__, key=f"flaky_run_{model}_{case}")
passing = [r for r in run_ids if int(runs.set_index("run_id").loc[r, "passes"]) > 0]
compare_run = right.selectbox(
    "Compare with a passing attempt from run",
    [None, *passing],
    index=(1 + passing.index(failing_run)) if failing_run in passing else (1 if passing else 0),
    format_func=lambda r: "(none)" if r is None else run_label[r],
    key=f"flaky_compare_run_{model}_{case}",
)
attempts = data.attempts(db, str(failing_run), model, case)
golden_path = str(attempts["golden_path"].iloc[0]) if not attempts.empty else ""
expected = data.expected_behaviour(golden_path, case) if golden_path else None
if compare_run is None:
    widgets.attempt_drilldown(attempts, expected, key=f"flaky_drill_{model}_{case}")
else:
    widgets.attempt_pair(attempts, data.attempts(db, str(compare_run), model, case), expected, key=f"flaky_pair_{model}_{case}")
