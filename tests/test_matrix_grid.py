"""The matrix as an HTML table (evalcore.dashboard.matrix_grid): colours, grey cells, labels, links and escaping."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs

from evalcore.dashboard import figures, matrix_grid
from tests.builders import matrix_frame

PAYLOAD = 'peek<b>BOLD</b><a href=x>L</a> "q" & more'


_frame = matrix_frame


def _cells(page: str) -> dict[tuple[str, str], dict[str, str]]:
    """(model, case) -> the cell's background, text, tooltip and link, as the browser reads them."""
    found = re.findall(
        r'<td data-model="([^"]*)" data-case="([^"]*)" style="background:(#[0-9a-f]{6});[^"]*"><a href="([^"]*)"[^>]* title="([^"]*)"[^>]*>([^<]*)</a></td>',
        page,
    )
    return {
        (unescape(m), unescape(c)): {"colour": colour, "link": unescape(link), "tip": unescape(tip), "text": unescape(text)}
        for m, c, colour, link, tip, text in found
    }


def test_pass_rates_take_the_heatmaps_colours():
    assert matrix_grid.pass_rate_colour(0.0) == "#d73027"
    assert matrix_grid.pass_rate_colour(0.5) == "#fee08b"
    assert matrix_grid.pass_rate_colour(1.0) == "#1a9850"
    assert matrix_grid.pass_rate_colour(0.25) == "#ea8859"  # halfway between red and yellow, channel by channel


def test_every_model_and_case_has_a_cell_with_its_numbers_and_grey_for_not_run_or_all_errored():
    page = matrix_grid.matrix_html(_frame(), {"golden": ["golden/tasks.yaml"]})
    headings = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', page)
    rows = re.findall(r'<th scope="row"[^>]*>([^<]*)</th>', page)
    assert headings == ["a (simulated)", "b"] and rows == ["c1", "c2"]  # columns by label, the first case on top
    cells = _cells(page)
    assert len(cells) == 4  # b never ran c2: still a cell, light grey
    assert cells[("b", "c2")] | {"link": ""} == {"colour": figures.NOT_RUN_COLOUR, "text": figures.NOT_RUN, "tip": figures.NOT_RUN_HOVER, "link": ""}
    errored = cells[("a", "c1")]  # run, but every attempt errored: dark grey, "5 errored"
    assert errored["colour"] == figures.ERRORED_COLOUR and errored["text"] == "5 errored" and figures.ERRORED_HOVER in errored["tip"]
    assert cells[("a", "c2")]["text"] == "3/4 · 1 errored" and cells[("a", "c2")]["colour"] == matrix_grid.pass_rate_colour(0.75)
    assert "pass^k 0.00" in cells[("a", "c2")]["tip"] and "top failing reason: wrong tool" in cells[("a", "c2")]["tip"]
    assert cells[("b", "c1")] | {"link": "", "tip": ""} == {"colour": "#1a9850", "text": "5/5", "link": "", "tip": ""}


def test_a_cell_links_to_the_page_with_its_model_and_case_and_the_chosen_cell_is_framed():
    page = matrix_grid.matrix_html(_frame(), {"golden": ["golden/tasks.yaml"], "models": ["a", "b"], "case": ["c1"]}, selected=("a", "c2"))
    link = _cells(page)[("a", "c2")]["link"]
    query, _, anchor = link.partition("#")
    assert query.startswith("?") and parse_qs(query[1:]) == {"golden": ["golden/tasks.yaml"], "models": ["a", "b"], "model": ["a"], "case": ["c2"]}
    assert anchor == "drill-down"  # the page opens scrolled to the drill-down it shows
    assert len(re.findall(r"outline:2px solid", page)) == 1
    assert re.search(r'<td data-model="a" data-case="c2" style="[^"]*outline:2px solid', page)


def test_labels_and_reasons_from_servers_and_models_are_text_never_markup():
    frame = _frame(model=[PAYLOAD, PAYLOAD, "b"], case_id=[PAYLOAD, "c2", PAYLOAD], top_failing_reason=[None, PAYLOAD + "x" * 1000, None])
    page = matrix_grid.matrix_html(frame, {"note": [PAYLOAD]})
    assert "<b>" not in page and "<a href=x>" not in page  # escaped everywhere
    cells = _cells(page)
    assert (PAYLOAD, PAYLOAD) in cells and (PAYLOAD, "c2") in cells  # the raw model and case, as the drill-down needs them
    heading = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', page)[1]
    assert heading == "peek&lt;b&gt;BOLD&lt;/b&gt;&lt;a href=x&gt;L&lt;/a&gt; &quot;q&quot; &amp; more (simulated)"
    tip = cells[(PAYLOAD, "c2")]["tip"]
    reason = tip.split("top failing reason: ", 1)[1]
    assert reason.startswith(PAYLOAD) and len(reason) == figures.MAX_HOVER_CHARS and reason.endswith("…")
    assert parse_qs(cells[(PAYLOAD, PAYLOAD)]["link"].partition("#")[0][1:]) == {"note": [PAYLOAD], "model": [PAYLOAD], "case": [PAYLOAD]}
