"""Dashboard page "Compare": two stored runs of one golden set side by side (or a comparison `evalcore compare` stored):
both matrices, the delta matrix coloured where the difference is significant, the verdicts, and per case what the
models saw differently and both transcripts. The URL carries the runs, the level and the case."""

from __future__ import annotations

import streamlit as st

from evalcore.compare.render import VERDICT_TEXT
from evalcore.dashboard import data, figures, widgets
from evalcore.dashboard.queries import AttemptFilters, RunFilters
from evalcore.errors import EvalcoreError
from evalcore.run_kinds import FINISHED_STATUSES

DEFAULT_ALPHA = 0.05
NEW = "(two runs picked below)"


def _alpha(text: str) -> float:
    value = float(text)
    if not 0.001 <= value <= 0.5:
        raise ValueError(text)
    return value


st.set_page_config(page_title="evalcore — compare", layout="wide")
st.title("Compare two runs")
st.caption(
    "Per (model, case): both arms' passes over their scored attempts (errored attempts are not scored, and are shown), the delta with "
    "its 95% interval, Fisher's exact test, and Benjamini-Hochberg across the cases; a cell is coloured only where the corrected "
    "difference is significant. The numbers are those of `evalcore compare --baseline-run A --candidate-run B` (docs/compare.md)."
)

db = data.db_path()
every = data.run_list(db, RunFilters())
complete = every[every["status"].isin(FINISHED_STATUSES)]
if complete.empty:
    widgets.empty_state(db, "finished behaviour runs")
    st.stop()
run_label = {r.run_id: f"{r.run_id} · {r.run_date:%Y-%m-%d} · {r.kind} · {r.status} · {r.golden_path}" for r in complete.itertuples(index=False)}
run_ids = list(complete["run_id"])

sidebar = st.sidebar
stored = {row["comparison_id"]: row for row in data.stored_comparisons(db)}
stored_choices = [NEW, *stored]
widgets.from_url("compare_stored", "comparison", stored_choices)
chosen_stored = sidebar.selectbox(
    "Stored comparison",
    stored_choices,
    key="compare_stored",
    format_func=lambda cid: cid if cid == NEW else f"{stored[cid]['created_at']:%Y-%m-%d %H:%M} · {cid} · {stored[cid]['candidate_kind']}",
    help="A comparison `evalcore compare` stored, shown as it was computed; or pick any two runs below.",
)
widgets.to_url("compare_stored", "comparison", None if chosen_stored == NEW else chosen_stored)
if chosen_stored != NEW:
    report = stored[chosen_stored]["report"]
    baseline, candidate = str(report["baselineRunId"]), str(report["candidateRunId"])
    source = report.get("candidate") or {}
    sidebar.caption(widgets.literal_label(f"baseline {baseline}, candidate {candidate} ({source.get('kind')}: {source.get('source')})"))
else:
    widgets.from_url("compare_baseline", "baseline", run_ids)
    widgets.from_url("compare_candidate", "candidate", run_ids)
    first_baseline, first_candidate = data.default_pair(complete)
    if st.session_state.get("compare_candidate") not in run_ids:
        st.session_state["compare_candidate"] = first_candidate
    if st.session_state.get("compare_baseline") not in run_ids:
        st.session_state["compare_baseline"] = first_baseline
    baseline = str(sidebar.selectbox("Baseline run", run_ids, key="compare_baseline", format_func=run_label.__getitem__))
    candidate = str(sidebar.selectbox("Candidate run", run_ids, key="compare_candidate", format_func=run_label.__getitem__))
    widgets.to_url("compare_baseline", "baseline", baseline)
    widgets.to_url("compare_candidate", "candidate", candidate)
    widgets.from_url("compare_alpha", "alpha", parse=_alpha)
    st.session_state.setdefault("compare_alpha", DEFAULT_ALPHA)
    alpha = float(sidebar.number_input("Level (alpha, after the correction)", 0.001, 0.5, key="compare_alpha", step=0.01, format="%.3f"))
    widgets.to_url("compare_alpha", "alpha", alpha if alpha != DEFAULT_ALPHA else None)
    try:
        report = data.comparison(db, baseline, candidate, alpha)
    except EvalcoreError as exc:
        st.error(widgets.literal_label(str(exc)))
        st.stop()

cases, models = data.comparison_frames(report)
summary = f"cases: {data.verdict_counts(cases)}; models, their cases pooled: {data.verdict_counts(models)}"
runs = f"{report['runs']} runs per case" if report.get("runs") is not None else "runs per case differ between the runs"
st.text(f"baseline {report['baselineRunId']} · candidate {report['candidateRunId']} · {report['goldenPath']} · {runs} · alpha {report['alpha']:g}")
labels = figures.model_labels({str(m): str(m).startswith("sim/") for m in cases["model"].unique()})
carrying = data.carrying_cells(cases, models)
if report.get("failed"):
    reasons = data.significance_reasons(cases, models, labels) or ["a model's pooled cases left some out (not measured)"]
    shown = "; ".join(reasons[:4]) + (f"; and {len(reasons) - 4} more" if len(reasons) > 4 else "")
    outlined = " The cells it rests on are outlined in red in the delta matrix." if carrying else ""
    st.error(widgets.literal_label(f"Significantly worse or not measured: {shown}.{outlined} {summary}."))
else:
    st.success(f"Nothing is significantly worse: {summary}.")

left, right = st.columns(2)
for column, arm, run_id in ((left, "Baseline", report["baselineRunId"]), (right, "Candidate", report["candidateRunId"])):
    cells = data.matrix(db, AttemptFilters(run_id=run_id))
    column.subheader(f"{arm}: run {run_id}")
    column.plotly_chart(figures.matrix_heatmap(cells), width="stretch", key=f"compare_matrix_{arm}")
    with column:
        widgets.download(cells.drop(columns=["server_fingerprint"]), f"matrix_{arm.lower()}", label=f"Download the {arm.lower()} matrix as CSV")
st.subheader("Delta: candidate − baseline")
event = st.plotly_chart(figures.delta_heatmap(cases, carrying), on_select="rerun", selection_mode="points", key="compare_delta", width="stretch")
st.caption(
    'Green: significantly better, red: significantly worse; grey "n.s.": no significant difference at these runs ("needs N runs": the runs '
    'per arm that would tell the difference seen, at the corrected level); "inconclusive": an arm scored nothing. Outlined in red: the cells '
    "a failing verdict rests on, a model's pooled verdict included."
)
widgets.table(cases, "comparison_cases")
st.caption("Per model, its cases pooled:")
widgets.table(models, "comparison_models")

st.subheader("One case")
pairs = list(zip(cases["model"], cases["case_id"], strict=True))
if not pairs:
    st.info("The two runs share no (model, case).")
    st.stop()
clicked = widgets.clicked_cell(event)
if clicked in pairs and st.session_state.get("_compare_clicked") != clicked:
    st.session_state["_compare_clicked"] = clicked
    st.session_state["compare_model"], st.session_state["compare_case"] = clicked
model_column, case_column = st.columns(2)
model_choices = sorted({model for model, _ in pairs})
widgets.from_url("compare_model", "model", model_choices)
opening = data.most_changed(cases, carrying)  # the case that changed most opens first
if st.session_state.get("compare_model") not in model_choices:  # another comparison, other models
    st.session_state["compare_model"] = opening[0] if opening else model_choices[0]
model = str(model_column.selectbox("Model", model_choices, key="compare_model", format_func=lambda m: figures.model_label(m, m.startswith("sim/"))))
case_choices = [case for m, case in pairs if m == model]
widgets.from_url("compare_case", "case", case_choices)
if st.session_state.get("compare_case") not in case_choices:
    of_model = data.most_changed(cases, carrying, model)
    st.session_state["compare_case"] = of_model[1] if of_model else case_choices[0]
case = str(case_column.selectbox("Case", case_choices, key="compare_case"))
widgets.to_url("compare_model", "model", model)
widgets.to_url("compare_case", "case", case)
row = cases[(cases["model"] == model) & (cases["case_id"] == case)].iloc[0]
st.text(
    f"baseline {row['baseline_passed']}/{row['baseline_scored']} · candidate {row['candidate_passed']}/{row['candidate_scored']} · "
    f"{figures.delta_text(row['delta'], str(row['verdict']), row['runs_needed'])} · {VERDICT_TEXT[str(row['verdict'])]}"
)
baseline_attempts = data.attempts(db, report["baselineRunId"], model, case)
candidate_attempts = data.attempts(db, report["candidateRunId"], model, case)
golden_path = str(baseline_attempts["golden_path"].iloc[0]) if not baseline_attempts.empty else ""
expected = data.expected_behaviour(golden_path, case) if golden_path else None
differences = data.catalog_differences(db, report["baselineRunId"], report["candidateRunId"])
expected_tools = {str(expected.get("expect_tool"))} | set(expected.get("expect_sequence") or ()) if expected else set()
if not differences:
    st.text("The models of both runs saw the same tools, word for word.")
for tool, difference in sorted(differences.items(), key=lambda item: (item[0] not in expected_tools, item[0])):
    note = " (this case expects it)" if tool in expected_tools else ""
    widgets.show_text(f"What the candidate's models saw differently of one tool{note}", f"{tool}\n{difference}")
st.caption("Left: an attempt of the baseline run (a failing one first); right: one of the candidate run (a passing one first).")
widgets.attempt_pair(baseline_attempts, candidate_attempts, expected, key=f"compare_pair_{model}_{case}")
