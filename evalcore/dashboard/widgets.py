"""Presentation layer: small Streamlit render helpers shared by the pages: sidebar filters, safe text, tables, empty states.

Text that came from a server or a model (tool results, final answers,
reasons, judge verdicts) is untrusted: it is rendered only through
`show_text` (a code block) or as dataframe cells, never through markdown or
HTML, so `<script>` or `**bold**` shows up verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from evalcore import jobs
from evalcore.errors import EvalcoreError
from evalcore.store.queries import AttemptFilters

EMPTY_STATE = "run `python -m evalcore demo` or `make run` to record some (`python -m evalcore conformance --reference` records a Layer 0 run only)."
ALL = "(all)"
NEWEST_PER_MODEL = "(newest run per model)"
ALL_RUNS = "(every run in the dates)"


def empty_state(db: Path, what: str = "behaviour runs") -> None:
    """Say the store has nothing to show yet, the command that fills it, and offer to build the simulated demo history."""
    st.info(f"No {what} yet in `{db}`: " + EMPTY_STATE)
    if demo_progress(db, reload_when_data_lands=True):
        return
    if st.button(f"Build the demo history ({jobs.DEMO_NIGHTS} simulated nights, about a minute)", key="launch_demo", type="primary"):
        try:
            jobs.launch_demo(db)
        except EvalcoreError as exc:
            st.error(str(exc))
            return
        st.rerun()


def demo_progress(db: Path, *, reload_when_data_lands: bool = False) -> bool:
    """While the demo history is being built into `db`: a progress bar that refreshes itself; True when one is shown.

    The page reloads when the demo ends, and, with `reload_when_data_lands` (an empty page), as soon as its first run is stored.
    """
    demo = next((job for job in jobs.list_jobs(db) if job.kind == "demo"), None)
    if demo is None or jobs.job_status(demo)["status"] != "running":
        return False

    @st.fragment(run_every="2s")
    def follow() -> None:
        status = jobs.job_status(demo)
        if status["status"] != "running" or (reload_when_data_lands and status["done"]):
            st.cache_data.clear()
            st.rerun(scope="app")
        done, total = int(status["done"] or 0), int(status["total"] or 1)
        st.progress(
            min(1.0, done / total),
            text=f"Building the simulated demo history: {done}/{total} runs stored (nightly runs, then the Layer 2 sets; pages fill in as they land)",
        )

    follow()
    return True


def sidebar_filters(options: Mapping[str, Sequence[Any]], *, choose_run: bool = True, no_run_label: str = NEWEST_PER_MODEL) -> AttemptFilters:
    """The filter widgets in the sidebar; the run comes from, and is written to, the URL (?run=...).

    `no_run_label` names what "no particular run" means on the page: the matrix
    shows each model's newest run, the latency, flaky and export pages every run.
    """
    sidebar = st.sidebar
    sidebar.header("Filters")
    golden_choices = [ALL, *options.get("golden_paths", [])]
    golden = sidebar.selectbox("Golden set", golden_choices, key="filter_golden")
    server = sidebar.selectbox("Server", [ALL, *options.get("servers", [])], key="filter_server")
    models = sidebar.multiselect("Models", list(options.get("models", [])), key="filter_models", placeholder="all models")
    kinds = sidebar.multiselect("Case kind", list(options.get("kinds", [])), key="filter_kinds", placeholder="hard and soft")
    date_from: date | None = None
    date_to: date | None = None
    dates = list(options.get("dates", []))
    if dates:
        chosen = sidebar.date_input("Run dates", value=(dates[0], dates[1]), min_value=dates[0], max_value=dates[1], key="filter_dates")
        if isinstance(chosen, tuple | list) and len(chosen) == 2:
            date_from, date_to = chosen[0], chosen[1]
    run_id: str | None = None
    if choose_run:
        run_choices = [no_run_label, *options.get("run_ids", [])]
        wanted = st.query_params.get("run")
        index = run_choices.index(wanted) if wanted in run_choices else 0
        run = sidebar.selectbox("Run", run_choices, index=index, key="filter_run")
        run_id = None if run == no_run_label else str(run)
        if run_id is None:
            st.query_params.pop("run", None)
        else:
            st.query_params["run"] = run_id
    return AttemptFilters(
        run_id=run_id,
        models=tuple(models),
        kinds=tuple(kinds),
        date_from=date_from,
        date_to=date_to,
        golden_path=None if golden == ALL else str(golden),
        server=None if server == ALL else str(server),
    )


def clicked_cell(event: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(model, case_id) of the first matrix cell a plotly selection event points at; None without one.

    The matrix's marker trace carries (model, case_id, run_id, ...) as each point's customdata.
    """
    if not event:
        return None
    for point in (event.get("selection") or {}).get("points") or []:
        customdata = point.get("customdata")
        if isinstance(customdata, list | tuple) and len(customdata) >= 2:
            return str(customdata[0]), str(customdata[1])
    return None


def show_text(label: str, text: Any) -> None:
    """Untrusted text, verbatim: a plain-text code block, never markdown or HTML. `label` must be our own words."""
    st.caption(label)
    st.code("—" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text), language=None, wrap_lines=True)


def table(frame: pd.DataFrame, name: str, *, label: str | None = None, selectable: bool = False) -> int | None:
    """A dataframe (cells are plain text) with a CSV download button under it; with `selectable`, the clicked row's position."""
    if selectable:
        event = st.dataframe(frame, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key=f"table_{name}")
    else:
        st.dataframe(frame, hide_index=True, width="stretch")
        event = None
    st.download_button(
        label or f"Download {name} as CSV",
        frame.to_csv(index=False),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"download_{name}",
        disabled=frame.empty,
    )
    rows = list(event.selection.rows) if event is not None else []
    return int(rows[0]) if rows and 0 <= int(rows[0]) < len(frame) else None


def attempt_columns(attempts: pd.DataFrame, expected: Mapping[str, Any] | None) -> None:
    """Every attempt of one model x case side by side: prompt, calls vs expected, results, answer, judge, telemetry."""
    if attempts.empty:
        st.info("No attempts for this model and case in the chosen run.")
        return
    show_text("Prompt (from the transcript)", attempts["prompt"].iloc[0])
    if expected is None:
        st.caption("Expected behaviour: the golden file is not readable from here.")
    else:
        show_text("Expected (from the golden file as it is now)", _expected_text(expected))
    for column, (_, row) in zip(st.columns(len(attempts)), attempts.iterrows(), strict=True):
        with column:
            st.text(f"Attempt {int(row['attempt'])}: {'PASS' if bool(row['passed']) else 'FAIL'}")
            verdicts = {key: _verdict(row[key]) for key in ("selection_correct", "args_correct", "sequence_correct", "over_call", "task_completed")}
            st.text("\n".join(f"{key}: {value}" for key, value in verdicts.items()))
            show_text("Reasons", row["reasons"] or "—")
            show_text("Tool calls and arguments", row["tool_calls"] or "(no tool calls)")
            show_text("Tool results", row["tool_results"] or "(none)")
            show_text("Final answer", row["final_text"])
            show_text("Judge", row["judge"] or "(no judge)")
            if row["fault_log"]:
                show_text("Injected fault or attack, and what the proxy did (Layer 2)", row["fault_log"])
            if row["error"] is not None and not pd.isna(row["error"]):
                show_text("Error", row["error"])
            st.text(
                f"latency {_number(row['latency_ms'], 0)} ms · tokens {_number(row['input_tokens'], 0)} in / {_number(row['output_tokens'], 0)} out"
                f" · cost {_number(row['cost_usd'], 5)} USD · stop {row['stop_reason']}"
            )
            st.text(f"model version: {row['model_version']}" + (" (simulated)" if bool(row["simulated"]) else ""))


def _expected_text(expected: Mapping[str, Any]) -> str:
    lines = [f"tool: {expected['expect_tool'] or '(no tool: a negative case)'}"]
    if expected.get("expect_args"):
        lines.append(f"arguments: {expected['expect_args']}")
    if expected.get("arg_match"):
        lines.append(f"argument matching: {expected['arg_match']}")
    if expected.get("expect_sequence"):
        lines.append("sequence: " + " -> ".join(expected["expect_sequence"]))
    lines.append(f"kind: {expected['kind']}")
    if expected.get("rubric"):
        lines.append(f"rubric: {expected['rubric']}")
    return "\n".join(lines)


def _verdict(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return "n/a"
    return "yes" if bool(value) else "no"


def _number(value: Any, digits: int) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{float(value):.{digits}f}"
