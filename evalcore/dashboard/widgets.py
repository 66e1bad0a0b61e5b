"""Presentation layer: small Streamlit render helpers shared by the pages: sidebar filters, safe text, tables, empty states.

Text that came from a server or a model (tool results, final answers,
reasons, judge verdicts) is untrusted: it is rendered only through
`show_text` / `code_block` (a code block) or as dataframe cells, never through
markdown or HTML, so `<script>` or `**bold**` shows up verbatim. It is also
bounded: a long value shows its first `SHOWN_CHARS` characters, and the rest
only behind an explicit "show all (100 KB)" expander (a download inside an
expander), so a server's 100 KB string cannot make a page tens of thousands
of pixels tall.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from evalcore import redaction
from evalcore.behaviour import jobs
from evalcore.dashboard import conversation, figures, progress, queries
from evalcore.dashboard.figures import NO_PRICE, missing, model_labels
from evalcore.dashboard.queries import AttemptFilters
from evalcore.errors import EvalcoreError
from evalcore.models.types import short_model_name
from evalcore.run_kinds import KIND_LABELS, standing_kinds
from evalcore.scoring import registry

EMPTY_STATE = "run `python -m evalcore demo` or `make run` to record some (`python -m evalcore conformance --reference` records a Layer 0 run only)."
ALL = "(all)"
NEWEST_PER_MODEL = "(newest run per model)"
ALL_RUNS = "(every run in the dates)"
MATRIX_PAGE = "pages/0_Matrix.py"  # the home page, as app.py names it
SHOWN_CHARS = 2_000  # of a long value in a drill-down, before "show all"
LINE_CHARS = 200  # of a value inside one line of our own text


def empty_state(db: Path, what: str = "behaviour runs") -> None:
    """Say the store has nothing to show yet, the command that fills it, and offer to build the simulated demo history."""
    if progress.demo_running(db):  # app.py's banner follows it: no advice to build what is being built
        st.info(f"No {what} yet in `{db}`: the demo history is being built (above); its first run lands within seconds.")
        return
    st.info(f"No {what} yet in `{db}`: " + EMPTY_STATE)
    if st.button(f"Build the demo history ({jobs.DEMO_NIGHTS} simulated nights; the first lands within seconds)", key="launch_demo", type="primary"):
        try:
            jobs.launch_demo(db)
        except EvalcoreError as exc:
            st.error(str(exc))
            return
        st.rerun()


def sidebar_filters(options: Mapping[str, Sequence[Any]], *, choose_run: bool = True, no_run_label: str = NEWEST_PER_MODEL) -> AttemptFilters:
    """The filter widgets in the sidebar, and what they select (`settle_filters`, then `draw_filters`)."""
    filters = settle_filters(options, choose_run=choose_run, no_run_label=no_run_label)
    draw_filters(options, choose_run=choose_run, no_run_label=no_run_label)
    return filters


def settle_filters(options: Mapping[str, Sequence[Any]], *, choose_run: bool = True, no_run_label: str = NEWEST_PER_MODEL) -> AttemptFilters:
    """What the sidebar's filters select, settled before their widgets are drawn, and written to the URL.

    Each widget's value is put in the session state under its key: a value the URL brings that was not applied yet
    (a shared link, a page switch), else the user's last choice, else the default; `draw_filters` then draws the
    widgets on those values. So a page can send what it shows before the sidebar (the matrix page does: the browser
    then loads the matrix's code first).

    A page shows one golden set at a time: the one run last, unless the URL
    names another (or a run of another). `no_run_label` names what "no
    particular run" means on the page: the matrix shows each model's newest
    run of the set, the latency, flaky and export pages every run of it.
    """
    golden = _settle_golden(options)
    server = _settle("filter_server", "server", [ALL, *options.get("servers", [])])
    models = _settle("filter_models", "models", list(options.get("models", [])), many=True)
    kinds = _settle("filter_kinds", "kinds", list(options.get("kinds", [])), many=True)
    date_from, date_to = _settle_dates("filter_dates", list(options.get("dates", [])))
    run_id: str | None = None
    if choose_run:
        run = _settle("filter_run", "run", _run_choices(options, golden, no_run_label), unset=no_run_label)
        run_id = None if run == no_run_label else str(run)
    return AttemptFilters(
        run_id=run_id,
        models=tuple(models),
        kinds=tuple(kinds),
        date_from=date_from,
        date_to=date_to,
        golden_path=golden,
        server=None if server == ALL else str(server),
    )


def draw_filters(options: Mapping[str, Sequence[Any]], *, choose_run: bool = True, no_run_label: str = NEWEST_PER_MODEL) -> None:
    """Draw the sidebar's filter widgets on the values `settle_filters` settled in this script run (call it after)."""
    sidebar = st.sidebar
    sidebar.header("Filters")
    paths = [str(path) for path in options.get("golden_paths", [])]
    if paths:
        golden = str(sidebar.selectbox("Golden set", paths, key="filter_golden", help="A page shows one golden set at a time; the one run last comes first."))
        hashes = dict(zip(paths, options.get("golden_hashes", []), strict=True))
        sidebar.caption(literal_label(f"{golden} · hash {str(hashes.get(golden, ''))[:12]}"))
    sidebar.selectbox("Server", [ALL, *options.get("servers", [])], key="filter_server")
    sidebar.multiselect("Models", list(options.get("models", [])), key="filter_models", placeholder="all models")
    sidebar.multiselect("Case kind", list(options.get("kinds", [])), key="filter_kinds", placeholder="hard and soft")
    dates = list(options.get("dates", []))
    if dates:
        sidebar.date_input("Run dates", min_value=dates[0], max_value=dates[-1], key="filter_dates")
    if choose_run:
        sidebar.selectbox("Run", _run_choices(options, st.session_state.get("filter_golden"), no_run_label), key="filter_run")


def _run_choices(options: Mapping[str, Sequence[Any]], golden: str | None, no_run_label: str) -> list[str]:
    of_set = [run for run, path in zip(options.get("run_ids", []), options.get("run_golden_paths", []), strict=True) if path == golden]
    return [no_run_label, *of_set]


def _settle(key: str, param: str, choices: Sequence[Any], *, many: bool = False, unset: Any = ALL) -> Any:
    """Settle one selectbox (`many`: multiselect) over `choices`: from the URL, else as it was, else the first choice
    (a multiselect: none); a value no longer offered is dropped. Written back to the URL, where `unset` (the choice
    that means "no particular one") is left out."""
    from_url(key, param, choices, many=many)
    if many:
        st.session_state[key] = [value for value in st.session_state.get(key) or [] if value in choices]
    elif st.session_state.get(key) not in choices:
        st.session_state[key] = choices[0]
    value = st.session_state[key]
    to_url(key, param, None if value == unset else value)
    return value


def _settle_golden(options: Mapping[str, Sequence[Any]]) -> str | None:
    """The golden set shown (None only when the store has no runs). The URL decides once per value it brings: ?run= picks
    that run's set, else ?golden=; from then on the picker is the user's."""
    paths = [str(path) for path in options.get("golden_paths", [])]
    if not paths:
        return None
    run_sets = dict(zip(options.get("run_ids", []), options.get("run_golden_paths", []), strict=True))
    wanted = run_sets.get(st.query_params.get("run")) or st.query_params.get("golden")
    if wanted in paths and st.session_state.get("_golden_from_url") != wanted:
        st.session_state["_golden_from_url"] = wanted
        st.session_state["filter_golden"] = wanted
    if st.session_state.get("filter_golden") not in paths:
        st.session_state["filter_golden"] = paths[0]  # the set run last
    golden = str(st.session_state["filter_golden"])
    st.query_params["golden"] = st.session_state["_golden_from_url"] = golden  # what the URL says now is the user's choice, not news
    return golden


def date_range(key: str, dates: Sequence[date]) -> tuple[date | None, date | None]:
    """The sidebar's run-date range within `dates` (first, last), read from and written to the URL (?from=...&to=...)."""
    chosen = _settle_dates(key, dates)
    if dates:
        st.sidebar.date_input("Run dates", min_value=dates[0], max_value=dates[-1], key=key)
    return chosen


def _settle_dates(key: str, dates: Sequence[date]) -> tuple[date | None, date | None]:
    """Settle the run-date range widget `key` within `dates` (first, last): from the URL, else as it was, narrowed to the
    dates there are, else all of them; written back to the URL."""
    if not dates:
        return None, None
    first, last = dates[0], dates[-1]
    wanted = [_iso_date(text) for text in (st.query_params.get("from"), st.query_params.get("to"))]
    texts = [st.query_params.get("from"), st.query_params.get("to")]
    if any(wanted) and st.session_state.get(f"_url_{key}") != texts:
        st.session_state[f"_url_{key}"] = texts
        st.session_state[key] = (max(first, min(wanted[0] or first, last)), max(first, min(wanted[1] or last, last)))
    bounds = st.session_state.get(f"_bounds_{key}")
    if key not in st.session_state or tuple(st.session_state[key]) == bounds:  # the whole range stays the whole range as runs land
        st.session_state[key] = (first, last)
    else:
        chosen_range = tuple(st.session_state[key])
        st.session_state[key] = tuple(max(first, min(day, last)) for day in chosen_range)
    st.session_state[f"_bounds_{key}"] = (first, last)
    chosen = st.session_state[key]
    if not (isinstance(chosen, tuple | list) and len(chosen) == 2):
        return None, None  # the second end is being picked
    date_from, date_to = chosen[0], chosen[1]
    narrowed = (date_from, date_to) != (first, last)
    for param, value in (("from", date_from), ("to", date_to)):
        if narrowed:
            st.query_params[param] = value.isoformat()
        else:
            st.query_params.pop(param, None)
    st.session_state[f"_url_{key}"] = [date_from.isoformat(), date_to.isoformat()] if narrowed else [None, None]
    return date_from, date_to


def _iso_date(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def layer0_verdict(verdict: pd.DataFrame) -> None:
    """The server's Layer 0 verdict, stated once (a `latest_conformance_verdict` frame; empty: not checked yet)."""
    if verdict.empty:
        st.info("Layer 0 (conformance) of this server: not checked yet — evalcore conformance --url ...")
        return
    row = verdict.iloc[0]
    passed = bool(row["passed"])
    text = (
        f"Layer 0 (conformance) of this server: {'CONFORMANT' if passed else 'NOT conformant'} "
        f"({int(row['failed_checks'])} failed of {int(row['checks'])} checks, "
        f"{row['era'] if isinstance(row['era'], str) else 'era unknown'}, run {row['run_id']})"
    )
    (st.success if passed else st.error)(text)


DRIFT_PAGE = "pages/2_Drift.py"


def drift_flags(changes: Sequence[Any], labels: Mapping[str, str], golden: str | None) -> None:
    """The open drift drops of the shown golden set (`evalcore.drift.Change`s), named once above the drill-down, with
    a link to the Drift page; nothing when there are none."""
    drops = sorted((c for c in changes if c.kind == "drop" and c.status == "open"), key=lambda c: (c.change_date, c.model, c.case_id))
    if not drops:
        return
    named = "; ".join(f"{labels.get(c.model, short_model_name(c.model))} · {c.case_id} ({c.attribution}, since {c.change_date})" for c in drops)
    st.warning(literal_label(f"Drift: {len(drops)} open drop(s) in this golden set: {named}."))
    st.page_link(DRIFT_PAGE, label="Open the Drift page: when each drop began, its evidence and cause", query_params={"golden": golden} if golden else None)


def run_state_notes(runs: pd.DataFrame, run_ids: Sequence[str]) -> list[tuple[str, str]]:
    """What the Matrix must say of the runs it shows (`queries.run_list` rows): (level, text) for each run that is not
    simply finished, or that does not stand for the server (an arm or a replay, opened by id). Level: info | warning."""
    by_id = runs.set_index("run_id") if not runs.empty else runs
    notes: list[tuple[str, str]] = []
    standing = {KIND_LABELS[kind] for kind in standing_kinds()}
    for run_id in sorted(run_ids):
        if run_id not in by_id.index:
            continue
        status, kind = str(by_id.loc[run_id, "status"]), str(by_id.loc[run_id, "kind"])
        if status == "running":
            notes.append(("info", f"Run {run_id} is still running: its cells count the attempts stored so far."))
        elif status == "crashed":
            notes.append(
                ("warning", f"Run {run_id} crashed before it finished: its cells count only what it stored (python -m evalcore run --resume {run_id}).")
            )
        elif status in ("failed", "cancelled"):
            why = by_id.loc[run_id, "why"]
            reason = f" ({why})" if isinstance(why, str) and why else ""
            notes.append(("warning", f"Run {run_id} {status} before it finished{reason}: its cells count only what it stored."))
        if kind not in standing:
            notes.append(("warning", f"Run {run_id} is a {kind}: it measured something other than the server as it is, and is never a baseline."))
    return notes


def judge_notes(judges: Mapping[str, Any]) -> list[str]:
    """What the Matrix says beside its judge-based figures (task completion, and the pass rate it enters): each shown
    run's judge, its standing when the run started and whether it gated, as the run's gate line says it."""
    return [f"Run {run_id}: {trust.gate_line()}. Judge page: its agreement with human labels." for run_id, trust in sorted(judges.items())]


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
    code_block(text)


def code_block(text: Any, *, nested_key: str | None = None) -> None:
    """Untrusted text as a plain code block, bounded: beyond `SHOWN_CHARS` characters it is cut, and the whole value
    waits behind a "show all (size)" expander; inside an expander (`nested_key` given), behind a download button."""
    value = "—" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text)
    if len(value) <= SHOWN_CHARS:
        st.code(value, language=None, wrap_lines=True)
        return
    size = text_size(value)
    st.code(f"{clip(value, SHOWN_CHARS)}\n(cut: {size} in all)", language=None, wrap_lines=True)
    if nested_key is not None:  # Streamlit nests no expander in another
        st.download_button(f"download all ({size})", value, file_name="value.txt", mime="text/plain", key=nested_key)
        return
    with st.expander(f"show all ({size})"):
        st.code(value, language=None, wrap_lines=True)


def literal_label(text: str) -> str:
    """`text` for a Streamlit label, caption or alert (they read Markdown), with every Markdown character escaped."""
    return "".join(f"\\{char}" if char in _MARKDOWN_CHARACTERS else char for char in text)


_MARKDOWN_CHARACTERS = frozenset("\\`*_{}[]()<>#+-.!|~:$")


def text_size(value: str) -> str:
    """The size of a text as a reader gauges it: "830 bytes", "100 KB", "2.5 MB" (UTF-8, powers of 1000)."""
    size = len(value.encode("utf-8"))
    if size < 1000:
        return f"{size} bytes"
    return f"{size / 1000:.0f} KB" if size < 1_000_000 else f"{size / 1_000_000:.1f} MB"


def clip(value: Any, limit: int = LINE_CHARS) -> str:
    """`value` as text of at most `limit` characters (an ellipsis marks a cut), for a value inside one line of ours."""
    return redaction.clip(str(value), limit)


def table(frame: pd.DataFrame, name: str, *, label: str | None = None, selectable: bool = False, links: Mapping[str, str] | None = None) -> int | None:
    """A dataframe (cells are plain text) with a CSV download button under it; with `selectable`, the clicked row's position.
    `links` names the columns that hold a page's address, each shown as a link reading the given text.

    The table shows models by their short labels, readable column names and formatted numbers; the CSV keeps every value as stored.
    """
    shown, config = _shown_numbers(_with_no_price(_with_short_models(frame))), column_config(frame)
    for column, text in (links or {}).items():
        config[column] = st.column_config.LinkColumn(column.replace("_", " "), display_text=text)
    if selectable:
        event = st.dataframe(shown, hide_index=True, width="stretch", column_config=config, on_select="rerun", selection_mode="single-row", key=f"table_{name}")
    else:
        st.dataframe(shown, hide_index=True, width="stretch", column_config=config)
        event = None
    download(frame, name, label=label)
    rows = list(event.selection.rows) if event is not None else []
    return int(rows[0]) if rows and 0 <= int(rows[0]) < len(frame) else None


def table_rows(frame: pd.DataFrame, name: str) -> list[int]:
    """`table` whose rows can be picked, several at once: the positions of the rows picked, in table order."""
    shown, config = _shown_numbers(_with_no_price(_with_short_models(frame))), column_config(frame)
    event = st.dataframe(shown, hide_index=True, width="stretch", column_config=config, on_select="rerun", selection_mode="multi-row", key=f"table_{name}")
    download(frame, name)
    return sorted(int(row) for row in event.selection.rows if 0 <= int(row) < len(frame))


def download(frame: pd.DataFrame, name: str, *, label: str | None = None) -> None:
    """What a table shows, downloadable: a CSV button (`label`, default "Download NAME as CSV") and a Parquet one beside it.

    Both hold every value as stored (the store keeps text already redacted); the Parquet file is written only when clicked.
    """
    frame = exported_costs(frame)
    csv_label = label or f"Download {name} as CSV"
    st.download_button(csv_label, queries.frame_csv(frame), file_name=f"{name}.csv", mime="text/csv", key=f"download_{name}", disabled=frame.empty)
    st.download_button(
        csv_label.replace(" as CSV", "") + " as Parquet",
        lambda: queries.frame_export(frame, "parquet"),
        file_name=f"{name}.parquet",
        mime="application/octet-stream",
        key=f"download_{name}_parquet",
        disabled=frame.empty,
    )


def from_url(key: str, param: str, choices: Sequence[Any] | None = None, *, many: bool = False, parse: Callable[[str], Any] = str) -> None:
    """Seed the widget `key` from the URL's `param` when the URL brings a value not applied yet (a shared link, a page
    switch); from then on the widget is the user's, and `to_url` writes its value back. Call it before the widget.

    Values outside `choices` (a run since deleted, a model not in the store) are dropped; `parse` reads one value ("2026-01-31" -> a date).
    """
    texts = st.query_params.get_all(param)
    values = []
    for text in texts:
        try:
            value = parse(text)
        except ValueError:
            continue
        if choices is None or value in choices:
            values.append(value)
    marker = f"_url_{key}"
    if values and st.session_state.get(marker) != texts:
        st.session_state[marker] = texts
        st.session_state[key] = values if many else values[0]


def to_url(key: str, param: str, value: Any) -> None:
    """Write a widget's value (`key`) to the URL's `param` (a list as the param repeated; nothing, or (all), removes it)."""
    values = list(value) if isinstance(value, list | tuple) else [] if value is None or value == ALL else [value]
    texts = [item.isoformat() if isinstance(item, date) else str(item) for item in values]
    if texts:
        st.query_params[param] = texts if len(texts) > 1 else texts[0]
    else:
        st.query_params.pop(param, None)
    st.session_state[f"_url_{key}"] = texts


def selected_row(name: str, rows: int) -> int | None:
    """The row clicked in the selectable `table(..., name, selectable=True)`, read before the table is drawn again (None: none)."""
    state = st.session_state.get(f"table_{name}")
    picked = list(((state or {}).get("selection") or {}).get("rows") or [])
    return int(picked[0]) if picked and 0 <= int(picked[0]) < rows else None


def cell_summary(cell: Mapping[str, Any]) -> str:
    """One matrix cell in words: "4/5 passed · pass^k 0.80", with "· 1 errored" when some attempts errored, or "5 errored: none scored"."""
    errored = 0 if missing(cell.get("errored")) else int(cell["errored"])
    scored = 0 if missing(cell.get("runs")) else int(cell["runs"])
    if scored == 0:
        return f"{errored} errored: none scored"
    text = f"{0 if missing(cell.get('passes')) else int(cell['passes'])}/{scored} passed · pass^k " + _number(cell.get("pass_hat_k"), 2)
    return text + (f" · {errored} errored" if errored else "")


def export_downloads(what: str, name: str, export: Callable[[str], bytes], *, enabled: bool) -> None:
    """A CSV and a Parquet download button of `export(file_format)`, as `name.csv` / `name.parquet`."""
    for file_format, label, mime in (("csv", "CSV", "text/csv"), ("parquet", "Parquet", "application/octet-stream")):
        payload = export(file_format) if enabled else b""
        file_name, key = f"{name}.{file_format}", f"{name}_{file_format}"
        st.download_button(f"Download {what} as {label}", payload, file_name=file_name, mime=mime, key=key, disabled=not payload)


def column_config(frame: pd.DataFrame) -> dict[str, Any]:
    """Each column's heading in words and its format, from what its name says it holds (`_ms`, `_usd`, `_rate`, ...):
    counts as whole numbers, dates as dates, costs as USD or "no price"."""
    config: dict[str, Any] = {}
    for column in frame.columns:
        heading = column_heading(str(column))
        if str(column).endswith("_usd"):
            config[column] = st.column_config.TextColumn(heading)  # shown as text: the amount, or "no price" (`_with_no_price`)
        elif pd.api.types.is_bool_dtype(frame[column]):
            config[column] = st.column_config.CheckboxColumn(heading)
        elif isinstance(frame[column].dtype, pd.DatetimeTZDtype):
            config[column] = st.column_config.DatetimeColumn(heading, format="YYYY-MM-DD HH:mm:ss")
        elif pd.api.types.is_datetime64_any_dtype(frame[column]):
            config[column] = st.column_config.DateColumn(heading, format="YYYY-MM-DD")
        elif pd.api.types.is_numeric_dtype(frame[column]):
            config[column] = st.column_config.NumberColumn(heading, format=_number_format(str(column), frame[column]))
        else:
            config[column] = st.column_config.Column(heading)
    return config


_WORDS = {"id": "ID", "p50": "p50", "p95": "p95", "usd": "(USD)", "ms": "(ms)", "k": "k", "llm": "LLM"}


def column_heading(column: str) -> str:
    """`latency_p50_ms` -> "Latency p50 (ms)", `pass_hat_k` -> "Pass^k", `run_id` -> "Run ID"."""
    special = {"pass_hat_k": "Pass^k", "case_id": "Case", "kind": "Kind", "over_call": "Over-call", "over_call_rate": "Over-call rate"}
    if column in special:
        return special[column]
    if column.startswith(queries.SCORE_PREFIX):
        scorer_id = column.removeprefix(queries.SCORE_PREFIX)
        title = next((s.title for s in registry.registered() if s.id == scorer_id), scorer_id)
        return title[:1].upper() + title[1:]
    words = [_WORDS.get(word, word) for word in column.split("_")]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def _is_rate(column: str) -> bool:
    """A column holding a fraction shown as a percentage (`_shown_numbers` scales it)."""
    return not column.startswith(queries.SCORE_PREFIX) and (column.endswith(("_rate", "_accuracy")) or column == "pass_hat_k")


def _is_tokens(column: str) -> bool:
    return column.startswith(("input_tokens", "output_tokens")) or column in {"tokens_per_correct", "tokens_per_attempt"}


def _shown_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """The values a table shows: rates as percentages (one decimal everywhere: "90.0%", "95.7%"), token counts whole
    (with thousands separators); the CSV keeps them as stored."""
    changed = {
        column: pd.to_numeric(frame[column], errors="coerce") * (100 if _is_rate(str(column)) else 1)
        for column in frame.columns
        if (_is_rate(str(column)) or _is_tokens(str(column))) and pd.api.types.is_numeric_dtype(frame[column])
    }
    changed = {column: values.round(0) if _is_tokens(str(column)) else values for column, values in changed.items()}
    return frame.assign(**changed) if changed else frame


def _number_format(column: str, values: pd.Series) -> str:
    if column.startswith(queries.SCORE_PREFIX):
        return "%.2f"  # a scorer's mean value: a rate for a yes/no scorer, a count for rounds or turns
    if _is_rate(column):
        return "%.1f%%"  # of the values `_shown_numbers` scaled to percent
    if column == "flakiness":
        return "%.2f"
    if column.endswith("_ms"):
        return "%.0f"
    if column.endswith("_usd"):
        return "%.5f"
    if _is_tokens(column):
        return "localized"  # whole (`_shown_numbers`), with thousands separators
    if pd.api.types.is_integer_dtype(values):
        return "%d"
    known = values.dropna()
    return "%d" if len(known) and bool((known == known.round()).all()) else "%.3f"  # a count stored as a float (a SQL sum) is still a count


def _with_no_price(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every `_usd` column as text: the amount (5 decimals), or "no price" for a simulated model or an unknown cost."""
    costs = [column for column in frame.columns if str(column).endswith("_usd")]
    if not costs or frame.empty:
        return frame
    simulated = _simulated(frame)
    return frame.assign(**{column: [cost_text(value, bool(flag)) for value, flag in zip(frame[column], simulated, strict=True)] for column in costs})


def exported_costs(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with a simulated model's `_usd` values null: an export says "no price" as the pages do, never 0.0."""
    costs = [column for column in frame.columns if str(column).endswith("_usd")]
    if not costs or frame.empty:
        return frame
    simulated = _simulated(frame).astype(bool).to_numpy()
    return frame.assign(**{column: frame[column].astype("float64").where(~simulated) for column in costs})


def _simulated(frame: pd.DataFrame) -> pd.Series:
    """Each row's simulated flag; a table without the flag still marks sim/ models: those are simulated by their name (ModelSpec)."""
    if "simulated" in frame.columns:
        return frame["simulated"]
    if "model" in frame.columns:
        return frame["model"].map(lambda model: str(model).startswith("sim/"))
    return pd.Series(False, index=frame.index)


def cost_text(value: Any, simulated: bool) -> str:
    """A cost as every page shows it: "0.00123" (USD), or "no price" when the model has none (simulated) or it is unknown."""
    return NO_PRICE if simulated or missing(value) else f"{float(value):.5f}"


def cost_chart(container: Any, frame: pd.DataFrame, *, key: str) -> None:
    """The cost chart of `frame` in `container`; models without a price are named in a sentence, and with none priced it replaces the chart."""
    unpriced = figures.unpriced_models(frame)
    if unpriced and len(unpriced) == frame["model"].nunique():
        container.info(literal_label(figures.no_price_sentence(unpriced)))
        return
    container.plotly_chart(figures.cost_chart(frame), width="stretch", key=key)
    if unpriced:
        container.caption(literal_label(figures.no_price_sentence(unpriced)))


def _with_short_models(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its model column shown by label (`sim/script:steady.yaml (simulated)`), as the charts show it."""
    if "model" not in frame.columns or frame.empty:
        return frame
    simulated = _simulated(frame)
    labels = model_labels({str(model): bool(flag) for model, flag in zip(frame["model"], simulated, strict=True)})
    return frame.assign(model=frame["model"].map(lambda model: labels[str(model)]))


@dataclass(frozen=True)
class HumanLabelling:
    """What the drill-down needs to let a person label its attempts (the Judge page measures the judge against them):
    the labels given so far, by attempt, and how to store one (attempt, "pass" | "fail", note)."""

    labels: Mapping[int, Any]  # attempt -> evalcore.records.JudgeLabel
    save: Callable[[int, str, str], None]


def attempt_drilldown(attempts: pd.DataFrame, expected: Mapping[str, Any] | None, *, key: str, labelling: HumanLabelling | None = None) -> None:
    """The attempts of one model x case in one run: pick one, or two to compare side by side (a failing one beside a passing one first).
    With `labelling`, each judged attempt offers the buttons "Human: meets the rubric / does not"."""
    attempt_pair(attempts, attempts, expected, key=key, labelling=labelling)


def attempt_pair(left: pd.DataFrame, right: pd.DataFrame, expected: Mapping[str, Any] | None, *, key: str, labelling: HumanLabelling | None = None) -> None:
    """An attempt of `left` (a failing one first, or the one the URL's `attempt` names) beside one of `right` (a passing
    one first), or alone when "(none)" is picked."""
    if left.empty:
        st.info("No attempts for this model and case in the chosen run.")
        return
    left_rows, right_rows = _by_attempt(left), _by_attempt(right)
    same = left is right
    first = next((n for n, row in left_rows.items() if not bool(row["passed"])), next(iter(left_rows)))
    wanted = st.query_params.get("attempt")
    if wanted is not None and wanted.isdigit() and int(wanted) in left_rows:
        first = int(wanted)  # a link to one attempt (the Judge page's): it opens alone
    picker, comparer = st.columns(2)
    chosen = picker.selectbox("Attempt", list(left_rows), index=list(left_rows).index(first), format_func=lambda n: _label(left_rows[n]), key=f"{key}_attempt")
    others: list[int | None] = [None, *[n for n in right_rows if not (same and n == chosen)]]
    second = next((n for n in others[1:] if n is not None and bool(right_rows[n]["passed"])), None)
    if same and (bool(left_rows[chosen]["passed"]) or wanted == str(chosen)):
        second = None  # a passing attempt (or the one a link names) alone, unless asked
    compare = comparer.selectbox(
        "Compare with",
        others,
        index=others.index(second),
        format_func=lambda n: "(none)" if n is None else _label(right_rows[n]),
        key=f"{key}_compare",
    )
    if expected is not None:
        with st.expander("What the golden set expects of this case"):
            st.code(_expected_text(expected), language=None, wrap_lines=True)
    if compare is None:
        attempt_view(left_rows[chosen], expected, key=f"{key}_left", labelling=labelling)
        return
    for column, (row, side) in zip(st.columns(2), ((left_rows[chosen], "left"), (right_rows[compare], "right")), strict=True):
        with column:
            attempt_view(row, expected, key=f"{key}_{side}", labelling=labelling if same else None)


def _by_attempt(frame: pd.DataFrame) -> dict[int, pd.Series]:
    return {int(row["attempt"]): row for _, row in frame.iterrows()}


def _label(row: pd.Series) -> str:
    return f"attempt {int(row['attempt'])} · {'PASS' if bool(row['passed']) else 'FAIL'}"


def attempt_view(row: pd.Series, expected: Mapping[str, Any] | None, *, key: str, labelling: HumanLabelling | None = None) -> None:
    """One attempt as a conversation: verdicts, why it failed, expected vs actual calls, each step in order, raw JSON behind a toggle."""
    passed = bool(row["passed"])
    transcript = _transcript(row.get("transcript"))
    header = f"Attempt {int(row['attempt'])}: {'PASS' if passed else 'FAIL'}"
    ending = attempt_ending(str(row["stop_reason"]), transcript)
    (st.success if passed else st.error)(header + (f" · {ending}" if ending else ""))
    verdicts = {label: _verdict(row[key]) for key, label in _VERDICTS.items()}
    st.text(" · ".join(f"{label} {value}" for label, value in verdicts.items()))
    if not passed and row["reasons"]:
        st.caption("Why it failed")
        code_block(row["reasons"])
    if isinstance(row["final_text"], str):
        transcript.setdefault("final_text", row["final_text"])
    want, got = conversation.calls_side_by_side(expected, _actual_calls(transcript))
    expected_column, actual_column = st.columns(2)
    with expected_column:
        show_text("Expected calls (golden file as it is now)", want)
    with actual_column:
        show_text("Actual calls", got)
    for index, entry in enumerate(conversation.conversation(transcript)):
        with st.chat_message(_AVATAR_NAMES[entry.kind], avatar=_AVATARS[entry.kind]):
            title = literal_label(clip(entry.title))  # a title names a tool: the model's or server's text
            if entry.failed:
                st.error(title)
            if entry.folded:
                with st.expander(title):
                    code_block(entry.body or "—", nested_key=f"{key}_{index}_all")
            else:
                if not entry.failed:
                    st.caption(title)
                code_block(entry.body or "—")
    if row["judge"]:
        show_text("Judge", row["judge"])
        if labelling is not None:
            human_label(int(row["attempt"]), labelling, key=f"{key}_human")
    if row["fault_log"]:
        show_text("Injected fault or attack, and what the proxy did (Layer 2)", row["fault_log"])
    st.text(
        f"latency {_number(row['latency_ms'], 0)} ms · tokens {_number(row['input_tokens'], 0)} in / {_number(row['output_tokens'], 0)} out"
        f" · cost {cost_text(row['cost_usd'], bool(row['simulated']))}{'' if bool(row['simulated']) or missing(row['cost_usd']) else ' USD'}"
        f" · stop {clip(row['stop_reason'])}"
    )
    st.text(f"model version: {clip(version_label(row['model_version']))}" + (" (simulated)" if bool(row["simulated"]) else ""))
    if st.toggle("Raw JSON", key=f"{key}_raw"):
        st.code(json.dumps(transcript, indent=2, ensure_ascii=False), language="json")


def human_label(attempt: int, labelling: HumanLabelling, *, key: str) -> None:
    """A person's verdict on the attempt's final answer against the rubric, beside the judge's: the label given so far,
    a note, and the buttons that store a new one (it replaces the old)."""
    given = labelling.labels.get(attempt)
    if given is not None:
        verdict = "meets the rubric" if given.label == "pass" else "does not meet the rubric"
        st.text(f"Human label: {verdict} ({given.labeller}{': ' + given.note if given.note else ''})")
    else:
        st.caption("No human label yet: does the final answer meet the rubric? (The Judge page measures the judge against these labels.)")
    note = st.text_input("Note (optional)", key=f"{key}_note", value=given.note if given is not None else "")
    meets, fails = st.columns(2)
    choice = "pass" if meets.button("Human: meets the rubric", key=f"{key}_pass") else "fail" if fails.button("Human: does not", key=f"{key}_fail") else None
    if choice is None:
        return
    try:
        labelling.save(attempt, choice, note)
    except EvalcoreError as exc:
        st.error(f"The label was not stored: {exc}")
        return
    st.rerun()


def version_label(version: Any) -> str:
    """A reported model version as the pages show it: a sim script's path shortened like its model's name everywhere."""
    if missing(version):
        return "not reported"
    name, _, rest = str(version).partition(" ")
    return " ".join(part for part in (short_model_name(name), rest) if part)


def attempt_ending(stop_reason: str, transcript: Mapping[str, Any]) -> str:
    """How an attempt ended when it is not a final answer, in words for the top of the attempt: "step limit reached after 8 turns"."""
    turns = len(transcript.get("turns") or ())
    counted = f"after {turns} turn{'s' if turns != 1 else ''}" if turns else ""
    endings = {"step_limit": "step limit reached", "model_error": "the model call failed", "server_error": "the server failed"}
    return " ".join(part for part in (endings.get(stop_reason, ""), counted if stop_reason in endings else "") if part)


_VERDICTS = {
    "selection_correct": "selection",
    "args_correct": "arguments",
    "sequence_correct": "sequence",
    "over_call": "over-call",
    "task_completed": "task completed",
}
_AVATAR_NAMES = {
    "system": "system",
    "user": "user",
    "simulated_user": "simulated user",
    "assistant": "assistant",
    "tool_call": "assistant",
    "tool_result": "tool",
    "input_request": "server",
    "error": "harness",
}
_AVATARS = {
    "system": ":material/settings:",
    "user": ":material/person:",
    "simulated_user": ":material/smart_toy:",
    "assistant": ":material/robot_2:",
    "tool_call": ":material/build:",
    "tool_result": ":material/output:",
    "input_request": ":material/help:",
    "error": ":material/error:",
}


def _transcript(value: Any) -> dict[str, Any]:
    if not isinstance(value, str) or not value:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _actual_calls(transcript: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [{"name": e.get("tool"), "arguments": e.get("arguments")} for e in transcript.get("executions") or () if isinstance(e, Mapping)]


def _expected_text(expected: Mapping[str, Any]) -> str:
    negative = "(no tool: a negative case)" if not expected.get("expect_set") else "(any tool of the set)"
    lines = [f"tool: {expected['expect_tool'] or negative}"]
    if expected.get("expect_args"):
        lines.append(f"arguments: {expected['expect_args']}")
    if expected.get("arg_match"):
        lines.append(f"argument matching: {expected['arg_match']}")
    if expected.get("expect_sequence"):
        lines.append("sequence: " + " -> ".join(expected["expect_sequence"]))
    if expected.get("expect_set"):
        lines.append("set (any order): " + ", ".join(expected["expect_set"]))
    for call in expected.get("expect_calls") or ():
        if call.get("args"):
            lines.append(f"{call['tool']} arguments: {call['args']}")
    lines.append(f"kind: {expected['kind']}")
    if expected.get("rubric"):
        lines.append(f"rubric: {expected['rubric']}")
    return "\n".join(lines)


def _verdict(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return "n/a"
    return "yes" if bool(value) else "no"


def _number(value: Any, digits: int) -> str:
    return "—" if missing(value) else f"{float(value):.{digits}f}"


def accept_baseline(db: Path, run_id: str) -> None:
    """Make a finished run the baseline of later runs of its golden set, as `evalcore baseline accept RUN_ID` does."""
    from evalcore.store.behaviour import accept_baseline as accept

    try:
        accept(db, run_id)
    except EvalcoreError as exc:
        st.error(literal_label(str(exc)))
        return
    st.success(f"Run {run_id} is now the baseline of later runs of its golden set.")


def scroll_here_on_arrival(anchor: str) -> None:
    """Bring the heading `anchor` into view when the page was opened at `#anchor` (a matrix cell's link), once per
    page load. Streamlit scrolls to such a heading when it first appears, but on a busy machine the page can end up
    back at its top; this runs after the heading is drawn, from a zero-height frame of the page's own origin."""
    import streamlit.components.v1 as components

    script = (
        "<script>const page = window.parent; const id = "
        + json.dumps(anchor)
        + "; if (page.location.hash === '#' + id) { const heading = page.document.getElementById(id);"
        " if (heading) heading.scrollIntoView(true); }</script>"
    )
    components.html(script, height=0)
