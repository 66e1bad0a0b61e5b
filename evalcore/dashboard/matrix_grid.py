"""Presentation layer: the model × case matrix as an HTML table, for `st.html`. Pure: a `queries.matrix` frame in, HTML out.

Why not the plotly heatmap: Streamlit loads plotly.js (4.7 MB) only when a page draws its first chart, and the
browser needs seconds to fetch, parse and compile it before anything shows; a table is in the page's own bundle,
so the matrix shows as soon as its rows reach the browser.

It shows what the heatmap showed: each cell coloured by pass rate on the same scale, reading passes/scored
(`figures.cell_text`), light grey "not run" and dark grey "k errored" cells, and the rest (pass^k, the top failing
reason) in the cell's tooltip. Each cell is a link to the page's own URL with `model` and `case` set, so a click
opens that cell's drill-down (and the URL says which one).

Every label is a model's, a case's or a server's text: each goes through `html.escape` (Streamlit also sanitizes
what `st.html` shows), and the tooltip is an attribute, which shows its text as typed.
"""

from __future__ import annotations

import functools
import html
import itertools
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from evalcore.dashboard.figures import (
    ERRORED_COLOUR,
    ERRORED_HOVER,
    NOT_RUN,
    NOT_RUN_COLOUR,
    NOT_RUN_HOVER,
    PASS_RATE_COLOURS,
    cell_text,
    hover_reason,
    missing,
    model_labels,
)

TEXT_COLOUR = "#1a1a1a"
GRID_CLASS = "matrix-grid"  # what the browser tests and bench/first_paint.py find the table by
DRILL_ANCHOR = "drill-down"  # the drill-down heading's anchor: a cell's link ends with it, so the page opens scrolled to it
# The table's styles, for its class. A page sends them on their own, first (`st.html` of style tags alone takes no
# space on the page): the browser then loads `st.html`'s code while the page reads the matrix, and draws the
# matrix the moment it arrives, instead of fetching that code only then.
STYLESHEET = (
    "<style>"
    + (
        f"table.{GRID_CLASS}{{border-collapse:collapse;font-size:13px;width:100%}}"
        f".{GRID_CLASS} thead th{{padding:4px 6px;text-align:center;font-weight:600;vertical-align:bottom}}"
        f".{GRID_CLASS} th[scope=row]{{padding:2px 8px;text-align:right;font-weight:400;white-space:nowrap}}"
        f".{GRID_CLASS} td{{border:1px solid #fff;padding:0;text-align:center;white-space:nowrap}}"
        f".{GRID_CLASS} td a{{display:block;padding:3px 6px;color:{TEXT_COLOUR};text-decoration:none}}"
    )
    + "</style>"
)


@functools.lru_cache(maxsize=4096)  # a matrix has few distinct rates (passes / attempts scored)
def pass_rate_colour(rate: float) -> str:
    """The colour of a pass rate (0..1) on the heatmap's scale: red, yellow at one half, green; interpolated in RGB as plotly does."""
    rate = min(max(float(rate), 0.0), 1.0)
    for (low, low_colour), (high, high_colour) in itertools.pairwise(_STOPS):
        if rate <= high:
            share = (rate - low) / (high - low)
            return "#" + "".join(f"{round(a + (b - a) * share):02x}" for a, b in zip(low_colour, high_colour, strict=True))
    return str(PASS_RATE_COLOURS[-1][1])


def matrix_html(cells: pd.DataFrame, query: Mapping[str, Sequence[str]], selected: tuple[str, str] | None = None) -> str:
    """The matrix of `cells` (a `queries.matrix` frame) as one HTML table: cases as rows (in order, first on top), models as
    columns (in the order of their labels). `query` is the page's URL query (param -> values): each cell links to it with
    `model` and `case` set to that cell. The `selected` (model, case) cell is framed.

    What every cell shares is styled once, by `STYLESHEET` (the page sends it first); a cell carries only its colour
    (and the frame): for 2,000 cells that is a third less HTML for the browser to sanitize and lay out."""
    simulated = cells.groupby("model")["simulated"].any()
    labels = model_labels({str(model): bool(flag) for model, flag in simulated.items()})
    models = sorted(labels, key=lambda model: labels[model])
    cases = sorted({str(case) for case in cells["case_id"]})
    # Column by column (`tolist` converts a column at once; `to_dict("records")` boxes every value on its own).
    columns = [cells[name].tolist() for name in _FIELDS]
    by_cell = {(str(row[0]), str(row[1])): dict(zip(_FIELDS, row, strict=True)) for row in zip(*columns, strict=True)}
    # The link of a cell is the page's query with its model and case: the rest is encoded once.
    kept = urlencode({name: list(values) for name, values in query.items() if name not in ("model", "case")}, doseq=True)
    prefix = "?" + (kept + "&" if kept else "")
    model_params = {model: urlencode({"model": model}) for model in models}
    case_params = {case: urlencode({"case": case}) for case in cases}
    escaped_models = {model: html.escape(model) for model in models}
    header = "".join(f'<th scope="col">{html.escape(labels[model])}</th>' for model in models)
    rows = []
    for case in cases:
        escaped_case = html.escape(case)
        row = "".join(
            _cell(
                by_cell.get((model, case)),
                (escaped_models[model], escaped_case),
                (case, labels[model]),
                html.escape(f"{prefix}{model_params[model]}&{case_params[case]}#{DRILL_ANCHOR}"),
                selected == (model, case),
            )
            for model in models
        )
        rows.append(f'<tr><th scope="row">{escaped_case}</th>{row}</tr>')
    return f'<div style="overflow-x:auto"><table class="{GRID_CLASS}"><thead><tr><th></th>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


_FIELDS = ("model", "case_id", "passes", "runs", "errored", "pass_rate", "pass_hat_k", "top_failing_reason")  # what a cell reads


def _cell(cell: Mapping[str, Any] | None, escaped: tuple[str, str], names: tuple[str, str], link: str, selected: bool) -> str:
    """One cell: `escaped` is its (model, case) escaped for HTML, `names` its case and model label as the tooltip
    names them, `link` its escaped link."""
    case, label = names
    if cell is None:
        colour, text, tip = NOT_RUN_COLOUR, NOT_RUN, NOT_RUN_HOVER
    else:
        text = cell_text(cell.get("passes"), cell.get("runs"), cell.get("errored"))
        rate = cell.get("pass_rate")
        scored = rate is not None and not missing(rate)
        colour = pass_rate_colour(float(rate)) if rate is not None and scored else ERRORED_COLOUR
        details = [f"case {case}", f"model {label}", f"passes {text}"]
        if scored:
            details += [f"pass^k {_number(cell.get('pass_hat_k'))}", f"top failing reason: {hover_reason(cell.get('top_failing_reason'))}"]
        else:
            details.append(ERRORED_HOVER)
        tip = "\n".join(details)
    frame = "outline:2px solid #000;outline-offset:-2px" if selected else ""
    return (
        f'<td data-model="{escaped[0]}" data-case="{escaped[1]}" style="background:{colour};{frame}">'
        f'<a href="{link}" target="_self" title="{html.escape(tip)}">{html.escape(text)}</a></td>'
    )


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


_STOPS = [(float(str(stop)), _rgb(str(colour))) for stop, colour in PASS_RATE_COLOURS]


def _number(value: Any) -> str:
    return "—" if missing(value) else f"{float(value):.2f}"
