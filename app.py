"""Dashboard entry point (`streamlit run app.py`): Layer 0 conformance runs recorded in the store.

Thin on purpose: widgets, a store query, render. The model x case matrix,
latency, drift and run pages arrive with the behaviour layer.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from evalcore.store.conformance import conformance_checks, conformance_runs

DB_PATH = Path(os.environ.get("EVALCORE_DB", "data/evals.duckdb"))

st.set_page_config(page_title="evalcore — MCP evaluation", layout="wide")
st.title("MCP conformance (2026-07-28)")

runs = conformance_runs(DB_PATH)
if not runs:
    st.info(f"No conformance runs in {DB_PATH} yet. Record one with: python -m evalcore conformance --reference")
    st.stop()

runs_frame = pd.DataFrame(runs)
st.dataframe(runs_frame, hide_index=True, width="stretch")
labels = {f"{r['started_at']:%Y-%m-%d %H:%M} · {r['target']} · {'conformant' if r['passed'] else 'NOT conformant'}": r["run_id"] for r in runs}
chosen = st.selectbox("Run", list(labels))
checks = pd.DataFrame(conformance_checks(DB_PATH, labels[chosen]))
st.dataframe(checks, hide_index=True, width="stretch")
st.download_button("Download checks as CSV", checks.to_csv(index=False), file_name="conformance_checks.csv", mime="text/csv")
