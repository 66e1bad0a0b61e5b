"""Dashboard entry point (`streamlit run app.py`): names the pages in pages/ and runs the one the URL asks for.

The matrix is the home page, at `/`; every other page keeps the address its
file name gives it (`/Latency_and_cost`, `/Drift`, ...), so links stay valid. While the demo history is being
built, its banner tops every page.
"""

from __future__ import annotations

import streamlit as st

from evalcore.dashboard import warmup

warmup.wait()  # `evalcore dashboard` loads the heavy libraries in the background as it starts: let it finish, never race it
from evalcore.dashboard import progress  # noqa: E402 (after the wait)

PAGES = [
    st.Page("pages/0_Matrix.py", title="Matrix", default=True),
    st.Page("pages/6_Runs.py", title="Runs", url_path="Runs"),
    st.Page("pages/7_Compare.py", title="Compare", url_path="Compare"),
    st.Page("pages/9_Golden_sets.py", title="Golden sets", url_path="Golden_sets"),
    st.Page("pages/1_Latency_and_cost.py", title="Latency and cost", url_path="Latency_and_cost"),
    st.Page("pages/2_Drift.py", title="Drift", url_path="Drift"),
    st.Page("pages/3_Flaky_cases.py", title="Flaky cases", url_path="Flaky_cases"),
    st.Page("pages/8_Judge.py", title="Judge", url_path="Judge"),
    st.Page("pages/4_Run.py", title="Run", url_path="Run"),
    st.Page("pages/5_Export.py", title="Export", url_path="Export"),
]

page = st.navigation(PAGES)
st.set_page_config(page_title="evalcore — MCP evaluation", layout="wide")
progress.demo_progress(progress.db_path())  # every page, before its own (heavier) imports load
page.run()
