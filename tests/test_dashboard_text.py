"""Untrusted text in the dashboard: escaped for plotly's label markup in every figure, and bounded on the page."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from evalcore.dashboard import figures
from evalcore.dashboard.widgets import SHOWN_CHARS, clip, text_size
from evalcore.drift import Fingerprints, RunPoint, detect_changes

PAYLOAD = "peek<b>BOLD</b><a href=x>L</a> &amp; &quot;"
ESCAPED = "peek&lt;b&gt;BOLD&lt;/b&gt;&lt;a href=x&gt;L&lt;/a&gt; &amp;amp; &amp;quot;"


def test_plotly_text_escapes_exactly_what_plotly_reads_as_markup() -> None:
    assert figures.plotly_text(PAYLOAD) == ESCAPED
    assert figures.plotly_text('say "hi" it\'s') == 'say "hi" it\'s'  # quotes stay quotes: plotly does not decode &quot;
    assert figures.plotly_text(3) == "3"


def _texts(figure) -> list[str]:  # type: ignore[no-untyped-def]
    """Every string a figure will show: axis ticks and categories, trace names, x/y values, hover data, text, the title."""
    shown: list[str] = [str(figure.layout.title.text or "")]
    for axis in (figure.layout.xaxis, figure.layout.yaxis):
        shown.extend(str(tick) for tick in axis.ticktext or ())
    for trace in figure.data:
        shown.append(str(trace.name or ""))
        for values in (trace.x, trace.y, getattr(trace, "text", None)):
            if values is not None:
                shown.extend(str(v) for v in (values if not isinstance(values[0], list | tuple) else [i for row in values for i in row]))
    return shown


def test_every_figure_escapes_model_tool_and_case_names() -> None:
    latency = pd.DataFrame({"model": [PAYLOAD], "simulated": [False], "latency_p50_ms": [1.0], "latency_p95_ms": [2.0]})
    latency = latency.assign(cost_per_attempt_usd=[0.1], cost_per_correct_usd=[0.2])
    tools = pd.DataFrame({"tool": [PAYLOAD], "latency_p50_ms": [1.0], "latency_p95_ms": [2.0]})
    matrix = pd.DataFrame(
        {
            "model": [PAYLOAD],
            "case_id": [PAYLOAD],
            "run_id": ["r"],
            "passes": [1],
            "runs": [5],
            "pass_rate": [0.2],
            "pass_hat_k": [0.0],
            "top_failing_reason": [PAYLOAD],
            "simulated": [False],
        }
    )
    built = [
        figures.latency_chart(latency),
        figures.cost_chart(latency),
        figures.latency_chart(latency.assign(run_date=[date(2026, 1, 1)])),
        figures.tool_latency_chart(tools),
        figures.matrix_heatmap(matrix),
    ]
    for figure in built:
        shown = " ".join(_texts(figure))
        assert "peek<b>" not in shown and "peek&lt;b&gt;" in shown, figure.layout.title.text
    cells = built[-1].data[-1]
    assert list(cells.customdata[0][:2]) == [PAYLOAD, PAYLOAD]  # a click still names the raw model and case
    assert cells.customdata[0][4] == ESCAPED


def test_drift_figures_escape_row_labels_attributions_and_titles() -> None:
    def fingerprints(version: str) -> Fingerprints:
        return Fingerprints("s", version, "c", (), "v", "[]")

    points = [
        RunPoint(PAYLOAD, "case", f"r{i}", date(2026, 1, i + 1), 5 if i < 6 else 0, 5, fingerprints(f"{PAYLOAD}-1" if i < 6 else f"{PAYLOAD}-2"))
        for i in range(9)
    ]
    changes = detect_changes(points)
    assert changes, "a 5/5 -> 0/5 drop after six good nights is found"
    overview = figures.drift_overview(points, changes)
    assert all("<b>" not in label for label in overview.data[0].y)
    assert all("<" not in str(item) for trace in overview.data[1:] for row in trace.customdata for item in row[2:])
    timeline = figures.drift_timeline(points, changes, PAYLOAD)
    assert timeline.layout.title.text == ESCAPED
    assert all("<b>" not in annotation.text for annotation in timeline.layout.annotations)


def test_long_hover_reasons_are_cut() -> None:
    frame = pd.DataFrame(
        {
            "model": ["m"],
            "case_id": ["c"],
            "run_id": ["r"],
            "passes": [0],
            "runs": [5],
            "pass_rate": [0.0],
            "pass_hat_k": [0.0],
            "top_failing_reason": ["x" * 100_000],
            "simulated": [False],
        }
    )
    reason = figures.matrix_heatmap(frame).data[-1].customdata[0][4]
    assert len(reason) == figures.MAX_HOVER_CHARS and reason.endswith("…")


@pytest.mark.parametrize(("text", "size"), [("x" * 830, "830 bytes"), ("x" * 100_000, "100 KB"), ("é" * 1_250_000, "2.5 MB")])
def test_text_sizes_read_as_a_reader_gauges_them(text: str, size: str) -> None:
    assert text_size(text) == size


def test_clip_cuts_long_values_inside_a_line() -> None:
    assert clip("short") == "short"
    assert len(clip("y" * 10_000)) == 200 and clip("y" * 10_000).endswith("…")
    assert SHOWN_CHARS < 100_000
