"""Presentation layer: plotly figures for the dashboard. Pure: a DataFrame in, a figure out (no streamlit, no I/O).

Model names shown on an axis carry " (simulated)" when their numbers come
from a `sim/` model, so a chart can never pass simulated numbers off as real.

Every text a figure shows (tick labels, category values, legend names, hover
values, titles) goes through `plotly_text` first: plotly reads a subset of HTML
in them (`<b>`, `<a href>`, `<br>`, entities), and a tool name, a model name
or a reason from a server must show as the characters it is, never as markup.
Untrusted text goes into hovers as data (`customdata`), never into a template.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.drift import Change, RunPoint
from evalcore.models.types import short_model_name

NOT_RUN = "not run"
NOT_RUN_COLOUR = "#d9d9d9"
ERRORED_COLOUR = "#a6a6a6"
NOT_RUN_HOVER = "not run: this model has no attempts of this case in the shown run"
ERRORED_HOVER = "no verdict: every attempt of this case errored (provider, server or harness error), so none was scored"
SIMULATED_SUFFIX = " (simulated)"
PASS_RATE_COLOURS = [[0.0, "#d73027"], [0.5, "#fee08b"], [1.0, "#1a9850"]]
MAX_HOVER_CHARS = 300  # of a server's or model's text in a hover box
MAX_TEXT_ARRAY_WIDTH = 200  # characters: see `_text_array`


def plotly_text(value: object) -> str:
    """`value` as plotly label text that shows exactly its characters.

    Plotly splits label text at `<...>` tags, then decodes only `&amp; &lt; &gt;
    &nbsp; &mu; &times; &plusmn; &deg;` and numeric entities in the text between
    them (`html.escape`'s `&quot;` would show as typed). So escaping `&`, `<` and
    `>` is exactly enough: no tag survives, and every entity-like run of text
    shows as typed.
    """
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def model_label(model: str, simulated: bool) -> str:
    """How a model is shown: `sim/script:<path>` shortened to the script's file name, " (simulated)" appended for sim models,
    " (host)" for an agent host (`host/...`, evalcore.hosts), " (host, simulated)" for a host on a sim model."""
    return _short_name(model) + _suffix(model, simulated)


def _suffix(model: str, simulated: bool) -> str:
    if model.startswith("host/"):
        return " (host, simulated)" if simulated else " (host)"
    return SIMULATED_SUFFIX if simulated else ""


def model_labels(simulated: Mapping[str, bool]) -> dict[str, str]:
    """Labels for several models at once (model -> label), shortened only where the short name stays unique."""
    short = Counter(_short_name(model) for model in simulated)
    return {model: (_short_name(model) if short[_short_name(model)] == 1 else model) + _suffix(model, flag) for model, flag in simulated.items()}


_short_name = short_model_name


def matrix_heatmap(df: pd.DataFrame) -> go.Figure:
    """Cases (rows) x models (columns), coloured by pass rate, from `evalcore.dashboard.queries.matrix`.

    Hover shows passes/runs, pass^k and the top failing reason. An invisible
    marker sits on every cell, carrying (model, case_id) as customdata, so a
    click selects a point (heatmaps themselves are not selectable in
    Streamlit). A cell the model never ran is light grey and says "not run"; one
    whose every attempt errored is darker grey and reads "k errored" (it was run,
    but nothing was scored). Layer 0
    is one verdict per server, so it is not a column here: the page states it once.

    Built in one step from plain values, unvalidated (`_validate=False`): plotly would otherwise check every array
    and copy the figure once per trace, and `st.plotly_chart` deep-copies it again on every render. So the arrays are
    the types plotly sends as they are: numbers as numeric arrays, text of one kind as numpy text arrays (copied
    whole, where an object array is copied element by element), and every property in its canonical form.
    """
    if df.empty:
        return go.Figure(layout={"title": {"text": "No behaviour attempts in scope"}})
    simulated = df.groupby("model")["simulated"].any()
    labels = {model: plotly_text(label) for model, label in model_labels({str(model): bool(flag) for model, flag in simulated.items()}).items()}
    models = sorted(labels, key=lambda model: labels[model])  # columns in the order a reader sees their names
    columns = [labels[m] for m in models]
    # Each row's column and case row, from the distinct models and cases (a few hundred), not from every cell.
    model_codes, model_ids = pd.factorize(df["model"])
    case_codes, case_ids = pd.factorize(df["case_id"])
    case_labels = [plotly_text(case) for case in case_ids]
    cases = sorted(case_labels, reverse=True)  # plotly draws y upwards: reverse so the first case is on top
    row_of_case = {label: index for index, label in enumerate(cases)}
    column = np.array([models.index(str(model)) for model in model_ids])[model_codes]
    row = np.array([row_of_case[label] for label in case_labels])[case_codes]
    rates = np.full((len(cases), len(columns)), np.nan)
    rates[row, column] = df["pass_rate"].to_numpy(dtype="float64", na_value=np.nan)
    not_run = np.ones(rates.shape, dtype=bool)
    not_run[row, column] = False
    no_verdict = np.isnan(rates) & ~not_run  # attempted, but every attempt errored: no pass rate, yet not "not run"
    # Columns sit at numeric positions with the labels as tick text: plotly draws a one-column heatmap on a
    # category axis one column off, which is what a single model (or a chosen run of one model) gives.
    x, y = np.arange(len(columns)), _text_array(cases)
    traces: list[dict[str, Any]] = []
    if (not_run | no_verdict).any():
        grey = np.full(rates.shape, None, dtype=object)  # null where the pass rate shows: plotly leaves those cells clear
        grey[no_verdict], grey[not_run] = 0.0, 1.0
        traces.append(
            {
                "type": "heatmap",
                "z": grey,
                "x": x,
                "y": y,
                "text": np.where(not_run, NOT_RUN, ""),
                "customdata": np.where(not_run, NOT_RUN_HOVER, np.where(no_verdict, ERRORED_HOVER, "")),
                "texttemplate": "%{text}",
                "colorscale": [[0.0, ERRORED_COLOUR], [1.0, NOT_RUN_COLOUR]],
                "zmin": 0,
                "zmax": 1,
                "showscale": False,
                "hovertemplate": "%{customdata}<extra></extra>",
                "name": NOT_RUN,
            }
        )
    traces.append(
        {
            "type": "heatmap",
            "z": rates,
            "x": x,
            "y": y,
            "colorscale": PASS_RATE_COLOURS,
            "zmin": 0,
            "zmax": 1,
            "colorbar": {"title": {"text": "pass rate"}},
            "hoverinfo": "skip",
            "name": "pass rate",
        }
    )
    errored = df["errored"].tolist() if "errored" in df.columns else [None] * len(df)  # a frame from before the count was kept
    reasons = df["top_failing_reason"].tolist()
    shown_reason = {reason: _reason(reason) for reason in set(reasons)}  # few distinct reasons: each cut and escaped once
    traces.append(
        {
            "type": "scatter",
            "x": column,
            "y": y[row],
            "mode": "markers+text",
            "text": _text_array([cell_text(p, n, e) for p, n, e in zip(df["passes"].tolist(), df["runs"].tolist(), errored, strict=True)]),
            "textfont": {"size": 10, "color": "#1a1a1a"},
            # invisible until selected; then an outline frames the chosen cell without hiding its colour
            "marker": {"size": 20, "opacity": 0.0, "symbol": "square-open", "color": "#000000", "line": {"width": 2}},
            # every cell's text stays as dark after a click as before it: plotly fades unselected points' text unless told
            "selected": {"marker": {"opacity": 1.0}, "textfont": {"color": "#1a1a1a"}},
            "unselected": {"marker": {"opacity": 0.0}, "textfont": {"color": "#1a1a1a"}},
            "customdata": np.column_stack(
                [
                    df["model"].to_numpy(dtype=object),  # raw ids for the click (widgets.clicked_cell); the rest is shown
                    df["case_id"].to_numpy(dtype=object),
                    df["run_id"].to_numpy(dtype=object),
                    df["pass_hat_k"].to_numpy(dtype=object),
                    np.array([shown_reason[reason] for reason in reasons], dtype=object),
                    np.array(columns, dtype=object)[column],
                ]
            ),
            "hovertemplate": (
                "case %{y}<br>model %{customdata[5]}<br>passes %{text}<br>pass^k %{customdata[3]:.2f}<br>top failing reason: %{customdata[4]}<extra></extra>"
            ),
            "showlegend": False,
            "name": "cells",
        }
    )
    return go.Figure({"data": traces, "layout": _cell_grid_layout_dict(columns, cases)}, _validate=False)


def _cell_grid_layout(figure: go.Figure, columns: Sequence[str], cases: Sequence[str]) -> go.Figure:
    """A models x cases grid's axes (`_cell_grid_layout_dict`) on `figure`."""
    figure.update_layout(_cell_grid_layout_dict(columns, cases))
    return figure


def _cell_grid_layout_dict(columns: Sequence[str], cases: Sequence[str]) -> dict[str, Any]:
    """A models x cases grid's axes: model columns at numeric positions labelled on top, cases top to bottom; a click selects a cell."""
    return {
        "xaxis": {
            "tickmode": "array",
            "tickvals": list(range(len(columns))),
            "ticktext": list(columns),
            "range": [-0.5, len(columns) - 0.5],
            "side": "top",
            "showgrid": False,
            "zeroline": False,
        },
        "yaxis": {"type": "category", "categoryorder": "array", "categoryarray": list(cases)},
        "height": max(320, 26 * len(cases) + 140),
        "margin": {"l": 10, "r": 40, "t": 60, "b": 10},
        "clickmode": "event+select",
        "dragmode": False,
    }


def _text_array(texts: Sequence[str]) -> np.ndarray:
    """Texts as a numpy text array, which plotly's `to_dict` copies in one piece (an object array is copied text by
    text); as an object array when one is long, since a text array gives every entry the longest one's width."""
    return np.array(texts, dtype=str if max(map(len, texts), default=0) <= MAX_TEXT_ARRAY_WIDTH else object)


def cell_text(passes: Any, scored: Any, errored: Any) -> str:
    """What a matrix cell reads: "4/5" (passes of the scored attempts), "3/4 · 1 errored", or "5 errored" when none was scored."""
    errors = 0 if missing(errored) else int(errored)
    if missing(scored) or int(scored) == 0:
        return f"{errors} errored" if errors else "no verdict"
    shown = f"{0 if missing(passes) else int(passes)}/{int(scored)}"
    return f"{shown} · {errors} errored" if errors else shown


def missing(value: Any) -> bool:
    """Whether a value from a frame is absent (None, NA or NaN)."""
    return value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value))


# Run dates over time: one tick a day at most, read as a date (a single date's ticks read "23:59:59.999" otherwise).
RUN_DATE_AXIS = {"type": "date", "tickformat": "%Y-%m-%d", "dtick": 86_400_000}


def latency_chart(df: pd.DataFrame) -> go.Figure:
    """Latency p50 and p95 per model: bars from `queries.latency`, or lines over run dates from `queries.latency_over_time`."""
    figure = go.Figure()
    if df.empty:
        figure.update_layout(title="No latency data in scope")
        return figure
    frame = _with_model_labels(df)
    if "run_date" in frame.columns:
        for label, group in frame.groupby("label", sort=True):
            figure.add_trace(go.Scatter(x=group["run_date"], y=group["latency_p50_ms"], mode="lines+markers", name=f"{label} p50", legendgroup=str(label)))
            figure.add_trace(
                go.Scatter(
                    x=group["run_date"], y=group["latency_p95_ms"], mode="lines+markers", name=f"{label} p95", line={"dash": "dot"}, legendgroup=str(label)
                )
            )
        figure.update_layout(**_legend_below(2 * frame["label"].nunique()), xaxis=RUN_DATE_AXIS)  # no x title: the dates say it, and it sat on the legend
    else:
        figure.add_trace(go.Bar(x=frame["label"], y=frame["latency_p50_ms"], name="p50"))
        figure.add_trace(go.Bar(x=frame["label"], y=frame["latency_p95_ms"], name="p95"))
        figure.update_layout(barmode="group")
    figure.update_layout(yaxis_title="model latency per attempt (ms)", title="Latency p50 / p95")
    return figure


def _legend_below(entries: int) -> dict[str, Any]:
    """A horizontal legend under the plot, the figure taller by its rows: a long legend at the side squashes the plot itself."""
    rows = -(-entries // 2)  # two entries a row fit the half-width column the Latency page gives each chart
    return {
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.18, "xanchor": "left", "x": 0},
        "height": 420 + 22 * rows,
        "margin": {"b": 60 + 22 * rows},
    }


def tool_latency_chart(df: pd.DataFrame) -> go.Figure:
    """Server latency p50/p95 per tool, from `queries.tool_latency`."""
    figure = go.Figure()
    if df.empty:
        figure.update_layout(title="No tool calls in scope")
        return figure
    tools = df["tool"].map(plotly_text)
    figure.add_trace(go.Bar(x=tools, y=df["latency_p50_ms"], name="p50"))
    figure.add_trace(go.Bar(x=tools, y=df["latency_p95_ms"], name="p95"))
    figure.update_layout(barmode="group", yaxis_title="server latency per call (ms)", title="Tool latency p50 / p95")
    return figure


NO_PRICE = "no price"


def unpriced_models(df: pd.DataFrame) -> list[str]:
    """Labels of the models in `df` without a price: simulated ones (a `sim/` model costs nothing because it is not a
    provider, which is no price), and those whose cost is unknown in every row. Their cost is never guessed or drawn."""
    unpriced = _unpriced_ids(df)
    labels = model_labels({str(m): bool(s) for m, s in zip(df["model"], df["simulated"], strict=True)}) if unpriced else {}
    return sorted(labels[model] for model in unpriced)


def _unpriced_ids(df: pd.DataFrame) -> set[str]:
    if df.empty:
        return set()
    cost = "cost_per_correct_usd" if "run_date" in df.columns else "cost_per_attempt_usd"
    priced = {str(model) for model, value, simulated in zip(df["model"], df[cost], df["simulated"], strict=True) if pd.notna(value) and not simulated}
    simulated = {str(model) for model, flag in zip(df["model"], df["simulated"], strict=True) if flag}
    return {str(model) for model in df["model"]} - (priced - simulated)


def no_price_sentence(labels: Sequence[str]) -> str:
    """What the Latency page says instead of a cost chart for models without a price."""
    return f"{NO_PRICE.capitalize()} for {', '.join(labels)}: cost is never guessed, so it is not drawn."


def cost_chart(df: pd.DataFrame) -> go.Figure:
    """Cost per attempt and per correct attempt (USD) per model, from `queries.latency` (or per run date from `latency_over_time`).

    Only models with a price are drawn (`unpriced_models` names the others, for the page to say so beside the chart).
    """
    figure = go.Figure()
    unpriced = _unpriced_ids(df)
    shown = _with_model_labels(df[~df["model"].astype(str).isin(unpriced)]) if not df.empty else df
    if shown.empty:
        figure.update_layout(title="No cost data in scope", xaxis={"visible": False}, yaxis={"visible": False})
        return figure
    if "run_date" in shown.columns:
        for label, group in shown.groupby("label", sort=True):
            figure.add_trace(go.Scatter(x=group["run_date"], y=group["cost_per_correct_usd"], mode="lines+markers", name=f"{label} per correct"))
        figure.update_layout(**_legend_below(shown["label"].nunique()), xaxis=RUN_DATE_AXIS)
    else:
        figure.add_trace(go.Bar(x=shown["label"], y=shown["cost_per_attempt_usd"], name="per attempt"))
        figure.add_trace(go.Bar(x=shown["label"], y=shown["cost_per_correct_usd"], name="per correct attempt"))
        figure.update_layout(barmode="group")
    figure.update_layout(yaxis_title="USD", title="Cost")
    return figure


def run_columns(points: Sequence[RunPoint]) -> dict[str, tuple[int, str]]:
    """run id -> (x position, tick label) in history order; runs sharing a date are told apart by the end of their id."""
    order = list(dict.fromkeys(p.run_id for p in points))
    day = {p.run_id: p.run_date.isoformat() for p in points}
    shared = Counter(day.values())
    return {run_id: (index, day[run_id] if shared[day[run_id]] == 1 else f"{day[run_id]} ·{run_id[-6:]}") for index, run_id in enumerate(order)}


def _run_axis(columns: Mapping[str, tuple[int, str]]) -> dict[str, Any]:
    # Numeric positions with tick labels, not a category axis: one run per column even when runs share a date.
    return {
        "tickmode": "array",
        "tickvals": [position for position, _ in columns.values()],
        "ticktext": [label for _, label in columns.values()],
        "range": [-0.5, len(columns) - 0.5],
        "title": "run",
        "showgrid": False,
        "zeroline": False,
    }


DROP_COLOUR, RECOVERY_COLOUR, BEFORE_COLOUR = "#d73027", "#1a9850", "#636363"


def drift_overview(points: Sequence[RunPoint], changes: Sequence[Change]) -> go.Figure:
    """Every (model, case) as a row, every run as a column (in history order), coloured by pass rate; each change point carries a marker.

    A drop's marker (x) and a recovery's (triangle) sit on the first run after
    the change point. A click on one selects it (customdata = model, case_id), like the matrix.
    """
    figure = go.Figure()
    if not points:
        figure.update_layout(title="No complete runs in scope")
        return figure
    rows = sorted({(p.model, p.case_id, p.simulated) for p in points}, key=lambda r: (r[0], r[1]), reverse=True)
    names = model_labels({model: simulated for model, _, simulated in rows})
    row_label = {(model, case): plotly_text(f"{names[model]} · {case}") for model, case, _ in rows}
    columns = run_columns(points)
    rate = {(row_label[(p.model, p.case_id)], p.run_id): p.pass_rate for p in points}
    counts = {(row_label[(p.model, p.case_id)], p.run_id): f"{p.passes}/{p.attempts}" for p in points}
    labels = [row_label[(m, c)] for m, c, _ in rows]
    figure.add_trace(
        go.Heatmap(
            z=[[rate.get((label, run_id)) for run_id in columns] for label in labels],
            x=[position for position, _ in columns.values()],
            y=labels,
            text=[[counts.get((label, run_id), "") for run_id in columns] for label in labels],
            customdata=[[tick for _, tick in columns.values()] for _ in labels],
            colorscale=PASS_RATE_COLOURS,
            zmin=0,
            zmax=1,
            colorbar={"title": "pass rate"},
            hovertemplate="%{y}<br>%{customdata}: %{text} passed<extra></extra>",
            name="pass rate",
        )
    )
    for kind, symbol, name in (("drop", "x", "drop (change point)"), ("recovery", "triangle-up", "recovery (change point)")):
        marked = [c for c in changes if c.kind == kind and c.change_run_id in columns]
        if not marked:
            continue
        figure.add_trace(
            go.Scatter(
                x=[columns[c.change_run_id][0] for c in marked],
                y=[row_label[(c.model, c.case_id)] for c in marked],
                mode="markers",
                marker={"symbol": symbol, "size": 14, "color": "#000000", "line": {"width": 1, "color": "#ffffff"}},
                customdata=[(c.model, c.case_id, plotly_text(c.attribution), f"{c.q_value:.2g}", _rates(c)) for c in marked],
                hovertemplate=f"{kind}: %{{customdata[2]}}<br>%{{customdata[4]}}<br>q = %{{customdata[3]}}<extra></extra>",
                name=name,
                showlegend=False,
            )
        )
    figure.update_layout(
        xaxis=_run_axis(columns),
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": labels, "title": None},
        height=max(320, 22 * len(labels) + 140),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        clickmode="event+select",
        dragmode=False,
    )
    return figure


def drift_timeline(history: Sequence[RunPoint], changes: Sequence[Change], title: str) -> go.Figure:
    """One (model, case): pass rate per run in history order; each change point as a dashed line, with the pooled pass rate
    before and after it (and its Wilson 95% band) as the test compared them (up to the run that confirmed it), and a marker
    on the run that first flagged it."""
    figure = go.Figure()
    if not history:
        figure.update_layout(title="No runs of this case")
        return figure
    columns = run_columns(history)
    figure.add_trace(
        go.Scatter(
            x=[columns[p.run_id][0] for p in history],
            y=[p.pass_rate for p in history],
            mode="lines+markers",
            line={"color": "#4575b4"},
            text=[f"{p.passes}/{p.attempts}" for p in history],
            customdata=[(plotly_text(columns[p.run_id][1]), plotly_text(p.run_id)) for p in history],
            hovertemplate="%{customdata[0]}: %{text} passed<br>run %{customdata[1]}<extra></extra>",
            name="pass rate",
        )
    )
    for change in changes:
        if change.change_run_id not in columns or change.detected_run_id not in columns:
            continue
        at, found = columns[change.change_run_id][0], columns[change.detected_run_id][0]
        compared = columns[change.confirmed_run_id][0] if change.confirmed_run_id in columns else found  # the last run the test counted
        start = columns[change.baseline_run_id][0] if change.baseline_run_id in columns else at - 1
        colour = DROP_COLOUR if change.kind == "drop" else RECOVERY_COLOUR
        for name, (x0, x1), (passes, attempts), band, line in (
            ("before", (start, at - 1), (change.before_passes, change.before_attempts), change.before_interval, BEFORE_COLOUR),
            ("after", (at, compared), (change.after_passes, change.after_attempts), change.after_interval, colour),
        ):
            rate = passes / attempts
            figure.add_trace(
                go.Scatter(
                    x=[x0 - 0.4, x1 + 0.4, x1 + 0.4, x0 - 0.4, x0 - 0.4],
                    y=[band[0], band[0], band[1], band[1], band[0]],
                    fill="toself",
                    fillcolor=_transparent(line),
                    line={"width": 0},
                    hoverinfo="skip",
                    name=f"{name}: 95% interval",
                    showlegend=False,
                )
            )
            figure.add_trace(
                go.Scatter(
                    x=[x0 - 0.4, x1 + 0.4],
                    y=[rate, rate],
                    mode="lines",
                    line={"color": line, "width": 3},
                    hovertemplate=f"{name} the change point: {passes}/{attempts} = {rate:.0%} (95% CI {band[0]:.0%}-{band[1]:.0%})<extra></extra>",
                    name=f"{name} the change point",
                )
            )
        figure.add_vline(x=at - 0.5, line={"dash": "dash", "color": colour, "width": 2})
        figure.add_annotation(
            x=at - 0.5, y=1.12, yref="y", text=plotly_text(f"{change.kind}: {change.attribution}"), showarrow=False, font={"color": colour}, xanchor="left"
        )
        figure.add_trace(
            go.Scatter(
                x=[found],
                y=[next(p.pass_rate for p in history if p.run_id == change.detected_run_id)],
                mode="markers",
                marker={"size": 16, "color": colour, "symbol": "x" if change.kind == "drop" else "triangle-up"},
                customdata=[(plotly_text(change.attribution), f"{change.q_value:.2g}", change.delay_runs, change.confirmation)],
                hovertemplate=(
                    "flagged here, %{customdata[2]} run(s) after the change point (%{customdata[3]})<br>%{customdata[0]}<br>q = %{customdata[1]}<extra></extra>"
                ),
                name=f"{change.kind} found",
            )
        )
    figure.update_layout(
        title=plotly_text(title),
        xaxis=_run_axis(columns),
        yaxis={"range": [-0.05, 1.2], "title": "pass rate", "tickformat": ".0%", "tickvals": [0, 0.25, 0.5, 0.75, 1.0]},
        height=400,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.25},
    )
    return figure


def _rates(change: Change) -> str:
    return (
        f"{change.before_passes}/{change.before_attempts} ({change.before_rate:.0%}) -> {change.after_passes}/{change.after_attempts} ({change.after_rate:.0%})"
    )


def _transparent(hex_colour: str, alpha: float = 0.15) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def _with_model_labels(df: pd.DataFrame) -> pd.DataFrame:
    """`df` (with model and simulated columns) plus each row's display `label`."""
    labels = model_labels({str(m): bool(s) for m, s in zip(df["model"], df["simulated"], strict=True)})
    return df.assign(label=df["model"].map(labels).map(plotly_text))


def hover_reason(value: Any) -> str:
    """A failing reason as a hover box or a tooltip shows it: cut to MAX_HOVER_CHARS, "—" when there is none."""
    if missing(value):
        return "—"
    text = str(value)
    return text if len(text) <= MAX_HOVER_CHARS else text[: MAX_HOVER_CHARS - 1] + "…"


def _reason(value: Any) -> str:
    return plotly_text(hover_reason(value))  # a reason comes from a server or a model


DELTA_COLOURS = [[0.0, "#d73027"], [0.5, "#f7f7f7"], [1.0, "#1a9850"]]  # worse (red) .. better (green), around no change
NOT_SIGNIFICANT_COLOUR = "#ededed"
CARRYING_COLOUR = "#d73027"  # the outline of a cell a failing verdict rests on
SIGNIFICANT = ("better", "worse")


def delta_heatmap(df: pd.DataFrame, carrying: Collection[tuple[str, str]] = ()) -> go.Figure:
    """Cases (rows) x models (columns) of a comparison (`data.comparison_frames`): the candidate's pass rate minus the
    baseline's, coloured only where the verdict is significant (`better` / `worse` after the correction); every other
    cell is pale grey and reads its delta with "n.s." and the runs per arm it would take ("needs 12 runs"), or
    "inconclusive" when an arm scored nothing. The (model, case) cells in `carrying` (`data.carrying_cells`: those a
    failing verdict rests on, a model's pooled one too) are outlined in red.

    As in `matrix_heatmap`, an invisible marker on each cell carries (model, case) for a click.
    """
    figure = go.Figure()
    if df.empty:
        figure.update_layout(title="Nothing compared")
        return figure
    labels = {model: plotly_text(label) for model, label in model_labels({str(m): str(m).startswith("sim/") for m in df["model"].unique()}).items()}
    columns = sorted(labels.values())
    position = {label: index for index, label in enumerate(columns)}
    frame = df.assign(model_label=df["model"].map(labels), case_label=df["case_id"].map(plotly_text))
    cases = sorted(frame["case_label"].unique(), reverse=True)
    significant = frame.assign(shown=[d if v in SIGNIFICANT else None for d, v in zip(frame["delta"], frame["verdict"], strict=True)])
    grid = significant.pivot(index="case_label", columns="model_label", values="shown").reindex(index=cases, columns=columns)
    figure.add_trace(
        go.Heatmap(
            z=[[0.0] * len(columns) for _ in cases],
            x=list(range(len(columns))),
            y=cases,
            colorscale=[[0.0, NOT_SIGNIFICANT_COLOUR], [1.0, NOT_SIGNIFICANT_COLOUR]],
            showscale=False,
            hoverinfo="skip",
            name="not significant",
        )
    )
    figure.add_trace(
        go.Heatmap(
            z=grid.to_numpy(dtype=float),
            x=list(range(len(columns))),
            y=cases,
            colorscale=DELTA_COLOURS,
            zmin=-1,
            zmax=1,
            colorbar={"title": "delta"},
            hoverinfo="skip",
            name="significant delta",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=frame["model_label"].map(position),
            y=frame["case_label"],
            mode="markers+text",
            text=[delta_text(d, v, n, separator="<br>") for d, v, n in zip(frame["delta"], frame["verdict"], frame["runs_needed"], strict=True)],
            textfont={"size": 10, "color": "#1a1a1a"},
            marker={"size": 20, "opacity": 0.0, "symbol": "square-open", "color": "#000000", "line": {"width": 2}},
            selected={"marker": {"opacity": 1.0}, "textfont": {"color": "#1a1a1a"}},
            unselected={"marker": {"opacity": 0.0}, "textfont": {"color": "#1a1a1a"}},
            customdata=list(
                zip(
                    df["model"],
                    df["case_id"],
                    [f"{b}/{n}" for b, n in zip(frame["baseline_passed"], frame["baseline_scored"], strict=True)],
                    [f"{c}/{n}" for c, n in zip(frame["candidate_passed"], frame["candidate_scored"], strict=True)],
                    [_probability(q) for q in frame["q_value"]],
                    frame["model_label"],
                    strict=True,
                )
            ),
            hovertemplate="case %{y}<br>model %{customdata[5]}<br>baseline %{customdata[2]} · candidate %{customdata[3]}<br>"
            "delta %{text} · q %{customdata[4]}<extra></extra>",
            showlegend=False,
            name="cells",
        )
    )
    row_of = {case: index for index, case in enumerate(cases)}
    for model, case in sorted(carrying):
        if model in labels and plotly_text(case) in row_of:
            x, y = position[labels[model]], row_of[plotly_text(case)]
            outline = {"color": CARRYING_COLOUR, "width": 3}
            figure.add_shape(type="rect", x0=x - 0.48, x1=x + 0.48, y0=y - 0.46, y1=y + 0.46, line=outline, name="carries the verdict")
    return _cell_grid_layout(figure, columns, cases)


def delta_text(delta: Any, verdict: str, runs_needed: Any = None, *, separator: str = ", ") -> str:
    """A delta cell's words: "+0.60 better", "-0.20 n.s." (not significant), with "needs 12 runs" where a difference
    that was seen would take more runs per arm to tell (`runsNeeded`), "inconclusive" (an arm scored nothing)."""
    if verdict == "inconclusive" or missing(delta):
        return "inconclusive"
    text = f"{float(delta):+.2f} {verdict if verdict in SIGNIFICANT else 'n.s.'}"
    if verdict not in SIGNIFICANT and not missing(runs_needed):
        text += f"{separator}needs {int(runs_needed)} runs"
    return text


def _probability(value: Any) -> str:
    if missing(value):
        return "—"
    return f"{float(value):.4f}" if float(value) >= 0.0001 else f"{float(value):.1e}"
