"""Dashboard page: review a golden file's draft cases (from `evalcore draft`): accept, edit or reject each, with coverage."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import streamlit as st

from evalcore.dashboard.golden_sets import coverage_line, golden_files, review_rows
from evalcore.errors import EvalcoreError
from evalcore.golden.loader import load_golden_set
from evalcore.golden.review_edit import accept_case, remove_case, replace_case, save_if_it_loads

st.set_page_config(page_title="evalcore — golden sets", layout="wide")
st.title("Golden sets")
st.caption("Drafted cases wait here for a human: accept, edit or reject each. `evalcore run` grades drafts only with --include-drafts.")

known = [str(path) for path in golden_files(Path.cwd())]
chosen = st.query_params.get("file") or (known[0] if known else "")
path_text = st.text_input("Golden file", value=chosen, help="a YAML golden file, e.g. one `evalcore draft --out` wrote")
if not path_text:
    st.info("Name a golden file (e.g. `evalcore draft --server reference --model sim/drafter --out golden/drafts.yaml`).")
    st.stop()
path = Path(path_text)
try:
    golden = load_golden_set(path)
except EvalcoreError as exc:
    st.error(str(exc).splitlines()[0])
    st.stop()

rows = review_rows(golden)
st.markdown(f"**{coverage_line(rows)}**")
by = st.text_input("Accepted by", value="human")


def _save(text: str) -> None:
    problem = save_if_it_loads(path, text)
    if problem:
        st.session_state["golden_problem"] = f"Not saved, the file would not load: {problem}"
    st.rerun()


if problem := st.session_state.pop("golden_problem", None):
    st.error(problem)
for row in rows:
    if row.status != "draft":
        continue
    with st.container(border=True):
        st.markdown(f"**{row.case.id}** · {row.tools} · draft by {row.case.review.by if row.case.review else '?'}")
        st.code(row.block.rstrip("\n"), language="yaml")
        accept, reject, edit = st.columns([1, 1, 4])
        text = path.read_text(encoding="utf-8")
        if accept.button("Accept", key=f"accept-{row.case.id}", type="primary"):
            _save(accept_case(text, golden.cases, row.case, by=by or "human", at=date.today().isoformat()))
        if reject.button("Reject", key=f"reject-{row.case.id}"):
            _save(remove_case(text, golden.cases, row.case))
        with edit.expander("Edit"):
            edited = st.text_area("The case as YAML", value=row.block, key=f"text-{row.case.id}", height=200)
            if st.button("Save", key=f"save-{row.case.id}"):
                _save(replace_case(text, golden.cases, row.case, edited))
if not any(row.status == "draft" for row in rows):
    st.success("No draft case left to review in this file.")
with st.expander(f"Reviewed and hand-written cases ({sum(row.status != 'draft' for row in rows)})"):
    for row in rows:
        if row.status != "draft":
            st.text(f"{row.case.id} · {row.status} · {row.tools}")
