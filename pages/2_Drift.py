"""Dashboard page: each case's pass rate over the runs, the persistent drops and recoveries found in it, their evidence and cause."""

from __future__ import annotations

import streamlit as st

from evalcore.dashboard import data, figures, widgets
from evalcore.drift import DriftSettings, render

DEFAULTS = DriftSettings()

st.set_page_config(page_title="evalcore — drift", layout="wide")
st.title("Drift")
st.caption(
    "A change is found when a case's pass rate moves and stays moved: every candidate change point in the recent runs is tested "
    "(the pooled attempts before it against those after it, exact test), corrected for the number of change points and for every "
    f"(model × case) tested that night (Benjamini-Hochberg, q ≤ {DEFAULTS.fdr}). One bad night among good ones is never a change. "
    "A drop one run settles is flagged that night as provisional, and the next run confirms or withdraws it; a change keeps the date "
    "of the night it was first flagged, the date that night's run reported. "
    "The cause compares every fingerprint of the last run before the change point with the first run after it. Method: docs/drift.md."
)

db = data.db_path()
options = data.filter_options(db)
if not options["models"]:
    widgets.empty_state(db)
    st.stop()

stored_runs = data.runs(db)
run_counts = stored_runs["golden_path"].value_counts()
golden_choices = sorted(options.get("golden_paths", []), key=lambda path: (-int(run_counts.get(path, 0)), str(path)))  # the longest history first
widgets.from_url("drift_golden", "golden", golden_choices)
golden = st.sidebar.selectbox("Golden set", golden_choices, key="drift_golden")
widgets.to_url("drift_golden", "golden", golden)
widgets.from_url("drift_min_baseline", "min_baseline", range(1, DEFAULTS.window - DEFAULTS.min_after + 1), parse=int)
st.session_state.setdefault("drift_min_baseline", DEFAULTS.min_baseline)
min_baseline = int(
    st.sidebar.number_input(
        "Minimum baseline (runs)",
        min_value=1,
        max_value=DEFAULTS.window - DEFAULTS.min_after,
        key="drift_min_baseline",
        help=f"Runs before a change point for it to be tested; {DEFAULTS.min_baseline} was chosen by bench/drift_sim.py.",
    )
)
widgets.to_url("drift_min_baseline", "min_baseline", min_baseline if min_baseline != DEFAULTS.min_baseline else None)
points, changes = data.drift(db, str(golden) if golden else None, min_baseline)
models = sorted({p.model for p in points})
widgets.from_url("drift_models", "models", models, many=True)
chosen_models = st.sidebar.multiselect("Models", models, key="drift_models", placeholder="all models")
widgets.to_url("drift_models", "models", chosen_models)
if chosen_models:
    points = [p for p in points if p.model in chosen_models]
    changes = [c for c in changes if c.model in chosen_models]
run_count = len({p.run_id for p in points})
needed = min_baseline + DEFAULTS.min_after
if run_count < needed:
    st.info(
        f"{run_count} complete run(s) of this golden set so far. Drift needs at least {needed}: {min_baseline} before a change point and "
        f"{DEFAULTS.min_after} after it. From then on every case is tested each night, and a persistent change shows here with its cause "
        "(model update, server description change with the diff, golden case edit, settings, or a silent model update)."
    )
    st.stop()
simulated = {p.model: p.simulated for p in points}
if any(simulated.values()):
    st.warning("Rows labelled (simulated) come from offline `sim/` models: their history is scripted, not a real provider's.")

drops = [c for c in changes if c.kind == "drop"]
still_open = [c for c in drops if c.status == "open"]
if still_open:
    st.error(f"{len(still_open)} open drop(s); {len(drops) - len(still_open)} recovered; over {run_count} runs.")
elif drops:
    st.success(f"Every drop recovered: {len(drops)} drop(s) over {run_count} runs, each closed by the run that fixed it.")
else:
    st.success(f"No persistent change over {run_count} runs: no case's pass rate moved beyond what its own history explains.")
labels = figures.model_labels(simulated)
st.dataframe(
    data.changes_table(changes, labels),
    hide_index=True,
    width="stretch",
    column_config={name: st.column_config.Column(name, width=width) for name, width in data.CHANGES_TABLE_WIDTHS.items()},
)
widgets.download(data.changes_frame(changes), "drift_changes", label="Download the changes with their evidence as CSV")

st.subheader("Every case over time")
event = st.plotly_chart(figures.drift_overview(points, changes), on_select="rerun", selection_mode="points", key="drift_overview", width="stretch")
clicked = widgets.clicked_cell(event)

st.subheader("One case")
pairs = sorted({(p.model, p.case_id) for p in points})
changed_first = sorted(pairs, key=lambda pair: (not any((c.model, c.case_id) == pair for c in changes), pair))
if st.session_state.get("drift_pair") not in pairs:
    # The URL's pair is applied once, when the picker first appears; from then on the picker is the user's.
    st.session_state.pop("drift_pair", None)
    from_url = (st.query_params.get("model"), st.query_params.get("case"))
    st.session_state["drift_pair"] = from_url if from_url in pairs else changed_first[0]
if clicked in pairs and st.session_state.get("_drift_clicked") != clicked:
    st.session_state["_drift_clicked"] = clicked
    st.session_state["drift_pair"] = clicked
model, case = st.selectbox("Model · case (changed first)", changed_first, key="drift_pair", format_func=lambda pair: f"{labels[pair[0]]} · {pair[1]}")
st.query_params["model"], st.query_params["case"] = model, case
history = [p for p in points if (p.model, p.case_id) == (model, case)]
own = [c for c in changes if (c.model, c.case_id) == (model, case)]
st.plotly_chart(figures.drift_timeline(history, own, f"{labels[model]} · {case}"), width="stretch")
if not own:
    st.text("No persistent change of this case.")
targets = dict(zip(stored_runs["run_id"], stored_runs["server_target"], strict=True))
for change in own:
    with st.container(border=True):
        st.text(render.headline(change))
        st.text(change.action)
        widgets.show_text("Evidence: every fingerprint of the last run before the change point against the first after it", change.evidence)
        st.caption("Next step: hold the server or the model fixed (record and replay, in the README)")
        st.code(render.next_step(change, golden=str(golden), db=str(db), server_now=targets.get(change.change_run_id)), language="bash")
