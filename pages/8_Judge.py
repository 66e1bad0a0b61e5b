"""Dashboard page "Judge": how far each judge agrees with human labels, per rubric; the attempts it passed and a person
failed; and the attempts to label next. Thin: widgets -> cached data functions (evalcore.dashboard.data) -> render."""

from __future__ import annotations

import streamlit as st

from evalcore.dashboard import data, queries, widgets

st.set_page_config(page_title="evalcore — judge", layout="wide")
st.title("Judge")
st.caption(
    "A judge (`run --judge MODEL`) grades each final answer against the rubric. Here it is measured against people: label attempts on the "
    'Matrix page\'s drill-down ("Human: meets the rubric / does not") or with `evalcore labels import`. Status: uncalibrated (fewer than 30 '
    "labels, or κ undefined), unreliable (κ < 0.4), trusted (50 labels or more and κ's 95% interval from 0.6 up), advisory otherwise. "
    "Under `--judge-policy trusted` only a trusted judge's verdicts enter pass and the gate. Formulas: docs/metrics.md."
)

db = data.db_path()
found = data.judge_agreements(db)
if not found:
    st.info("No judged attempts yet: run with a judge, e.g. python -m evalcore run --judge sim/judge")
    st.stop()

st.subheader("Agreement per judge and rubric")
widgets.table(queries.agreement_table(found), "judge_agreement")
labels = {f"{entry.model} · rubric {entry.rubric_hash[:12]} · {entry.status} · n {entry.n}": entry for entry in found}
chosen = labels[st.selectbox("Judge and rubric", list(labels), key="judge_pick")]
st.text(f"{chosen.model} · rubric {chosen.rubric_hash[:12]}: {chosen.status} ({chosen.reason})")
st.caption("Confusion matrix: the judge's verdict by row, the human label by column.")
widgets.table(queries.confusion_table(chosen).reset_index(names="judge \\ human"), "judge_confusion")

st.subheader("Dangerous: the judge passed, a person failed")
dangerous = data.dangerous_attempts(db, chosen.model, chosen.rubric_hash)
if dangerous.empty:
    st.success("No attempt this judge passed was failed by a person.")
else:
    st.caption("Each one is a bad answer the judge would let through the gate. Open its drill-down from the last column.")
    widgets.table(dangerous, "judge_dangerous", links={"drill_down": "open"})

st.subheader("Label next")
queue = data.labelling_queue(db, chosen.model, chosen.rubric_hash, 20)
if queue.empty:
    st.success("Every attempt this judge graded under this rubric is labelled.")
else:
    st.caption("Never one already labelled; spread over models and cases, with the judge's passes and fails both represented.")
    widgets.table(queue.drop(columns=["human", "labeller", "note"]), "judge_queue", links={"drill_down": "open"})
