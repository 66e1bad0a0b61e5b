"""Dashboard page "Run": launch a behaviour run in the background (your server, golden file and models), follow it, cancel it."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from evalcore.behaviour import jobs
from evalcore.dashboard import data, widgets
from evalcore.errors import EvalcoreError

DB_PATH = data.db_path()
SERVER_KINDS = {"reference": "The bundled reference server", "url": "A Streamable HTTP URL", "stdio": "A stdio command"}

st.set_page_config(page_title="evalcore — run", layout="wide")
st.title("Run an evaluation")
st.caption("Starts the same runner as `python -m evalcore run`, in the background: it keeps going if you reload or leave this page.")

with st.form("launch", enter_to_submit=False):  # only the button starts a run
    left, right = st.columns(2)
    bundled = jobs.golden_sets()
    golden = left.selectbox("Golden set", bundled, format_func=lambda path: path.name)
    other_golden = left.text_input("…or your own golden file (a path on this machine)", placeholder="path/to/golden.yaml", key="golden_file")
    server_kind = right.radio("Server", list(SERVER_KINDS), format_func=SERVER_KINDS.__getitem__, horizontal=True, key="server_kind")
    url = right.text_input("Server URL (with a Streamable HTTP URL)", placeholder="http://127.0.0.1:8000/mcp", key="server_url")
    stdio = right.text_input("Command (with a stdio command)", placeholder="python -m my_server --stdio", key="server_stdio")
    offered = jobs.offered_models()
    models = st.multiselect(
        "Models",
        offered,
        default=offered[:1],
        accept_new_options=True,
        format_func=lambda m: f"{m} (simulated)" if m.startswith("sim/") else m,
        help="Any litellm model string (openai/gpt-4o-mini, anthropic/…, ollama/…): type it and press Enter.",
    )
    st.caption(
        "A model's API key is read from the environment the dashboard was started in (OPENAI_API_KEY, ANTHROPIC_API_KEY, …), "
        "never typed here; a missing key is named before the run starts."
    )
    runs = st.number_input("Runs per case", min_value=1, max_value=20, value=5)
    submitted = st.form_submit_button("Start run")

if submitted:
    chosen_golden = Path(other_golden.strip()) if other_golden.strip() else golden
    target = {"server": "reference" if server_kind == "reference" else None, "url": url if server_kind == "url" else None}
    target["stdio"] = stdio if server_kind == "stdio" else None
    try:
        if chosen_golden is None:
            raise EvalcoreError("choose a golden set")
        job = jobs.launch(db=DB_PATH, golden=chosen_golden, models=list(models), runs=int(runs), **target)
        st.success(f"Started run {job.run_id}")
    except EvalcoreError as exc:
        st.error(widgets.literal_label(str(exc)))

launched = jobs.list_jobs(DB_PATH)
following = any(jobs.job_status(job)["status"] in jobs.ACTIVE for job in launched[:10])


@st.fragment(run_every="2s" if following else None)  # no polling once every shown job has ended
def launched_runs() -> None:
    shown = jobs.list_jobs(DB_PATH)[:10]
    if not shown:
        st.info("No runs launched from this page yet.")
        return
    statuses = [jobs.job_status(job) for job in shown]
    if following and not any(status["status"] in jobs.ACTIVE for status in statuses):
        st.rerun(scope="app")  # the last job just ended: redraw the page once, without the timer
    for job, status in zip(shown, statuses, strict=True):
        with st.container(border=True):
            st.text(f"{job.run_id} · {status['status']} · {', '.join(job.models)} · {Path(job.golden).name} · {job.server} · {job.runs} runs per case")
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
            finished_run = status["status"] == "complete" and job.kind == "run"
            if finished_run and st.button("Open this run in the matrix", key=f"open-{job.run_id}"):  # in this tab, on its golden set
                golden_path = data.run_golden_path(DB_PATH, job.run_id)
                st.switch_page(widgets.MATRIX_PAGE, query_params={"run": job.run_id, **({"golden": golden_path} if golden_path else {})})
            if finished_run and not status.get("baseline") and st.button("Accept as the baseline", key=f"accept-{job.run_id}"):
                widgets.accept_baseline(DB_PATH, job.run_id)  # `evalcore baseline accept RUN_ID`, by hand
            elif finished_run and status.get("baseline"):
                st.text("This run is a baseline for later runs of its golden set.")
            if status["status"] in jobs.ACTIVE and st.button("Cancel", key=f"cancel-{job.run_id}"):
                jobs.cancel(job)


launched_runs()
