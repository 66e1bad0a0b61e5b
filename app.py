"""Dashboard entry point (`streamlit run app.py`): the page list. Each page is a thin file in pages/.

Pages read the store named by EVALCORE_DB (default data/evals.duckdb); data
access and figures live in evalcore.dashboard and evalcore.store.queries.
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="evalcore — MCP evaluation", layout="wide")
st.navigation(
    [
        st.Page("pages/0_Matrix.py", title="Matrix", default=True),
        st.Page("pages/1_Latency_and_cost.py", title="Latency and cost"),
        st.Page("pages/2_Drift.py", title="Drift"),
        st.Page("pages/3_Flaky_cases.py", title="Flaky cases"),
        st.Page("pages/4_Run.py", title="Run"),
        st.Page("pages/5_Export.py", title="Export"),
    ]
).run()
