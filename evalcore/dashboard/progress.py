"""Presentation layer: the store the dashboard reads, and the banner every page shows while the demo history is being built.

Light on purpose (streamlit and `evalcore.behaviour.jobs`, no pandas or plotly): `app.py` shows the banner before a page's own
imports have loaded, so a first visit to a fresh dashboard reads what is going on within a second or two.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from evalcore.behaviour import jobs

DEFAULT_DB = "data/evals.duckdb"


def db_path() -> Path:
    """The store the dashboard reads: EVALCORE_DB, else data/evals.duckdb."""
    return Path(os.environ.get("EVALCORE_DB", DEFAULT_DB))


def building_demo(db: Path) -> jobs.Job | None:
    """The demo job building its history into `db` right now, if one is."""
    demo = next((job for job in jobs.list_jobs(db) if job.kind == "demo"), None)
    return demo if demo is not None and jobs.job_status(demo)["status"] == "running" else None


def demo_running(db: Path) -> bool:
    return building_demo(db) is not None


def demo_progress(db: Path) -> bool:
    """While the demo history is being built into `db`: a banner with its progress that refreshes itself; True when one is shown.

    Each time a night lands the page redraws with it (the pages fill in as nights land), and once more when the demo ends.
    """
    demo = building_demo(db)
    if demo is None:
        return False

    @st.fragment(run_every="2s")
    def follow() -> None:
        status = jobs.job_status(demo)
        done, total = int(status["done"] or 0), int(status["total"] or 1)
        landed = max(done - 1, 0)  # the run counted last is the one in progress
        seen = st.session_state.get("_demo_landed")
        st.session_state["_demo_landed"] = landed
        if status["status"] != "running" or (seen is not None and landed > seen):
            st.cache_data.clear()
            st.rerun(scope="app")
        st.progress(min(1.0, landed / total), text=demo_banner(done, demo.nights or jobs.DEMO_NIGHTS, total))

    follow()
    return True


def demo_banner(started: int, nights: int, total: int) -> str:
    """The demo's progress in words: its Layer 2 and multi-turn sets first ("the Layer 2 and multi-turn sets (1 of 3)"),
    then "night 3 of 21": the nightly set is built last, so the pages open on it."""
    others = total - nights
    if started <= others:
        step = f"the Layer 2 and multi-turn sets ({max(started, 1)} of {others}), then {nights} nights"
    else:
        step = f"night {started - others} of {nights}"
    return f"Building the demo history: {step}. The pages fill in as each lands."
