"""Dashboard page "Matrix", the home page (`app.py` names the pages): one golden set's model x case matrix, the drill-down under it, Layer 0.

Thin on purpose: widgets -> cached data functions (evalcore.dashboard.data) ->
the matrix table (evalcore.dashboard.matrix_grid) -> render. The URL carries the
selection (?golden=...&run=...&model=...&case=...), so a cell can be linked to:
each cell of the matrix is such a link.
"""

from __future__ import annotations

import functools

import streamlit as st

from evalcore.dashboard import data, figures, matrix_grid, widgets
from evalcore.dashboard.queries import RunFilters

st.set_page_config(page_title="evalcore — MCP evaluation", layout="wide")
st.title("Model × case matrix")
st.html(matrix_grid.STYLESHEET)  # the table's styles first: the browser loads the code that draws the table meanwhile

db = data.db_path()
options = data.filter_options(db)
if not options["models"] and data.conformance_runs(db).empty:
    widgets.empty_state(db, "runs")
    st.stop()
if not options["models"]:
    widgets.empty_state(db)
else:
    filters = widgets.settle_filters(options)  # their widgets are drawn after the matrix: see below
    cells = data.matrix(db, filters)
    if cells.empty:
        widgets.draw_filters(options)
        st.info("No attempts match these filters.")
    else:
        # The cell the drill-down opens, chosen before the matrix is drawn so the matrix can frame it.
        models = sorted(cells["model"].unique())
        if st.session_state.get("table_model_summary"):  # a click on the summary (drawn further down) picks its model
            summary = data.model_summary(db, filters)
            summary_row = widgets.selected_row("model_summary", len(summary))
            if summary_row is not None and summary["model"].iloc[summary_row] != st.session_state.get("_applied_row"):
                st.session_state["_applied_row"] = st.session_state["drill_model"] = str(summary["model"].iloc[summary_row])
        wanted_model = st.query_params.get("model")
        if "drill_model" not in st.session_state or st.session_state["drill_model"] not in models:
            st.session_state["drill_model"] = wanted_model if wanted_model in models else models[0]
        cases = sorted(cells.loc[cells["model"] == st.session_state["drill_model"], "case_id"].unique())
        wanted_case = st.query_params.get("case")
        if "drill_case" not in st.session_state or st.session_state["drill_case"] not in cases:
            st.session_state["drill_case"] = wanted_case if wanted_case in cases else cases[0]

        # The matrix goes out first: what only annotates it (the Layer 0 verdict, run states) is read after it is on its way.
        golden_label = st.empty()  # the set's caption sits above the matrix but is read after it is sent
        query = {name: st.query_params.get_all(name) for name in st.query_params}
        st.html(matrix_grid.matrix_html(cells, query, (st.session_state["drill_model"], st.session_state["drill_case"])))
        widgets.draw_filters(options)  # the sidebar after the matrix it filters, so a new browser loads the matrix's code first
        golden_label.caption(widgets.literal_label("Golden set " + data.golden_set_label(db, filters.golden_path)))
        st.caption(
            'Colour: pass rate of the shown run (red 0% → green 100%); each cell reads passes/attempts scored. Light grey "not run": '
            'no attempts of that case by that model. Dark grey "k errored": every attempt errored, so none was scored. '
            "Point at a cell for its pass^k and top failing reason; click it to open its drill-down."
        )
        latest = cells.sort_values("run_date").iloc[-1]
        verdict = data.latest_conformance_verdict(db, str(latest["server_target"]), str(latest["server_fingerprint"]))
        widgets.layer0_verdict(verdict)
        for level, note in widgets.run_state_notes(data.run_list(db, RunFilters()), sorted(set(cells["run_id"]))):
            (st.info if level == "info" else st.warning)(note)
        for note in widgets.judge_notes(data.run_judges(db, tuple(sorted(set(cells["run_id"]))))):
            st.info(note)
        if bool(cells["simulated"].any()):
            st.warning("Columns labelled (simulated) come from offline `sim/` models: they test the pipeline and your tool descriptions, not a real model.")
        simulated = cells.groupby("model")["simulated"].any()
        labels = figures.model_labels({str(m): bool(flag) for m, flag in simulated.items()})
        widgets.drift_flags(data.drift(db, filters.golden_path)[1], labels, filters.golden_path)

        st.subheader("Drill-down", anchor=matrix_grid.DRILL_ANCHOR)  # a cell's link scrolls here
        widgets.scroll_here_on_arrival(matrix_grid.DRILL_ANCHOR)
        st.caption("Click a cell of the matrix, or pick a model and a case.")
        model_column, case_column = st.columns(2)
        model = model_column.selectbox("Model", models, key="drill_model", format_func=labels.__getitem__)
        case = case_column.selectbox("Case", cases, key="drill_case")
        st.query_params["model"], st.query_params["case"] = model, case
        cell = cells[(cells["model"] == model) & (cells["case_id"] == case)].iloc[0]
        st.text(f"{labels[model]} · {case} · run {cell['run_id']} · {widgets.cell_summary(cell)}")
        attempts = data.attempts(db, str(cell["run_id"]), model, case)
        golden_path = str(attempts["golden_path"].iloc[0]) if not attempts.empty else ""
        run_id = str(cell["run_id"])
        labelling = widgets.HumanLabelling(data.attempt_labels(db, run_id, model, case), functools.partial(data.label_attempt, db, run_id, model, case))
        expected = data.expected_behaviour(golden_path, case) if golden_path else None
        widgets.attempt_drilldown(attempts, expected, key=f"matrix_drill_{model}_{case}", labelling=labelling)

        st.subheader("Per-model summary")
        st.caption("Click a row to drill into that model.")
        summary = data.model_summary(db, filters)
        widgets.table(summary, "model_summary", selectable=True)
        with st.expander(f"Cells: every model × case of the matrix ({len(cells)} rows)"):
            widgets.table(cells.drop(columns=["server_fingerprint"]), "matrix", label="Download the matrix as CSV")

st.header("Layer 0: conformance runs")
conformance = data.conformance_runs(db)
if conformance.empty:
    st.info("No conformance runs yet: python -m evalcore conformance --reference")
else:
    widgets.table(conformance, "conformance_runs")
    labels = {
        f"{r.started_at:%Y-%m-%d %H:%M} · {r.target} · {'conformant' if r.passed else 'NOT conformant'}": r.run_id for r in conformance.itertuples(index=False)
    }
    chosen = st.selectbox("Conformance run", list(labels))
    widgets.table(data.conformance_checks(db, str(labels[chosen])), "conformance_checks")
    st.subheader("Official requirement set 2026-07-28")
    st.caption(
        "Each server scenario of the official conformance suite's requirements/2026-07-28.yaml: how our checks cover it "
        "(same, differently, missing) and its verdict in this run, from those checks (docs/conformance.md)."
    )
    widgets.table(data.requirement_coverage(db, str(labels[chosen])), "requirement_coverage")
