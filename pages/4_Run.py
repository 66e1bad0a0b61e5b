"""Run page: launch an ad-hoc behaviour run in the background, follow it, cancel it."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from evalcore import jobs
from evalcore.dashboard import data
from evalcore.errors import EvalcoreError
from evalcore.target import CONFIGURED_SERVERS

DB_PATH = data.db_path()

st.set_page_config(page_title="evalcore — run", layout="wide")
st.title("Run an evaluation")
st.caption("Starts the same runner as `python -m evalcore run`, in the background: it keeps going if you reload or leave this page.")

with st.form("launch", enter_to_submit=False):  # only the button starts a run
    golden = st.selectbox("Golden set", jobs.golden_sets(), format_func=lambda path: path.name)
    server = st.selectbox("Server", list(CONFIGURED_SERVERS), format_func=lambda name: f"{name} — {CONFIGURED_SERVERS[name]}")
    offered = jobs.offered_models()
    models = st.multiselect("Models", offered, default=offered[:1], format_func=lambda m: f"{m} (simulated)" if m.startswith("sim/") else m)
    runs = st.number_input("Runs per case", min_value=1, max_value=20, value=5)
    submitted = st.form_submit_button("Start run")

if submitted and golden is not None and server is not None:
    try:
        job = jobs.launch(db=DB_PATH, golden=golden, server=server, models=list(models), runs=int(runs))
        st.success(f"Started run {job.run_id}")
    except EvalcoreError as exc:
        st.error(str(exc))


@st.fragment(run_every="2s")
def launched_runs() -> None:
    launched = jobs.list_jobs(DB_PATH)
    if not launched:
        st.info("No runs launched from this page yet.")
        return
    for job in launched[:10]:
        status = jobs.job_status(job)
        with st.container(border=True):
            st.text(f"{job.run_id} · {status['status']} · {', '.join(job.models)} · {Path(job.golden).name} · {job.runs} runs per case")
            total = status["total"] or 0
            if total:
                unit = "runs of the simulated demo history" if job.kind == "demo" else "attempts"
                st.progress(min(1.0, status["done"] / total), text=f"{status['done']}/{total} {unit}")
            if status["reason"]:
                st.text(f"why: {status['reason']}")
            for score in status.get("scores") or []:
                rate = "—" if score["pass_rate"] is None else f"{score['pass_rate']:.0%}"
                label = score["model"] + (" (simulated)" if score["simulated"] else "")
                st.text(f"{label}: pass rate {rate} ({score['passes']}/{score['attempts']} attempts passed)")
            if status["status"] == "complete" and job.kind == "run":
                st.markdown(f"[Open this run in the matrix](./?run={job.run_id})")  # the run id is evalcore's own, never page input
            if status["status"] in ("running", "starting") and st.button("Cancel", key=f"cancel-{job.run_id}"):
                jobs.cancel(job)


launched_runs()
