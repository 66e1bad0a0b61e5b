"""The dashboard in a real browser: `streamlit run app.py` on 127.0.0.1, driven by Playwright in Debian's headless Chromium.

`make test` installs the `chromium` package; these tests fail (not skip) without
it. Playwright never downloads a browser here: it is pointed at /usr/bin/chromium.
Screenshots of each test land in artifacts/screenshots/ (uploaded by CI).
"""

from __future__ import annotations

import concurrent.futures
import csv
import io
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from evalcore.commands.dashboard import streamlit_command
from evalcore.dashboard import queries
from tests.builders import finish_recorded_run
from tests.judge_builders import JudgedRun, labelled_run
from tests.waiting import wait_for_exit, wait_for_http

# The first test here also builds the session's demo store and starts Streamlit and Chromium.
pytestmark = pytest.mark.timeout(900)  # a hang guard, not a speed bound: the first test also builds the demo store

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("EVALCORE_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
README_SHOTS = ROOT / "docs" / "screenshots"  # the README's pictures, redrawn by the tests that show them
PASS_COLOUR, FAIL_COLOUR = (0x1A, 0x98, 0x50), (0xD7, 0x30, 0x27)  # the ends of the matrix's pass-rate scale
# The demo's nightly set, columns sorted by label: the keyword baseline and the two scripted models.
DEMO_COLUMNS = ["sim/lexical (simulated)", "sim/script:assistant-latest.yaml (simulated)", "sim/script:assistant-pinned.yaml (simulated)"]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-gpu", "--no-first-run", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def dashboard(demo_db, tmp_path_factory) -> Iterator[str]:
    """The dashboard over a copy of the demo store (the run test writes to it), on a free loopback port."""
    folder = tmp_path_factory.mktemp("browser")
    db = folder / "evals.duckdb"
    shutil.copyfile(demo_db[0], db)
    yield from _serve(db, folder)


@pytest.fixture
def empty_dashboard(tmp_path) -> Iterator[tuple[str, Path]]:
    """The dashboard over a store that does not exist yet."""
    db = tmp_path / "evals.duckdb"
    for url in _serve(db, tmp_path):
        yield url, db


def _serve(db: Path, folder: Path) -> Iterator[str]:
    port = _free_port()
    log = (folder / "streamlit.log").open("w")
    command = streamlit_command(port)  # the command `python -m evalcore dashboard` runs
    environment = {name: value for name, value in os.environ.items() if not name.endswith("_API_KEY")}  # no test here calls a paid model
    process = subprocess.Popen(command, cwd=ROOT, env={**environment, "EVALCORE_DB": str(db)}, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(f"{url}/_stcore/health", process, what="streamlit", log=(folder / "streamlit.log").read_text)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=120)
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: `make test` installs Debian's chromium package (apt-get install chromium)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, request) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    opened = context.new_page()
    yield opened
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    opened.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    context.close()


# The matrix table with a cell for every model (column heading) in every case (row), as bench/first_paint.py waits for it.
WHOLE_MATRIX = """() => { const table = document.querySelector('table.matrix-grid'); if (!table) return false;
    const columns = table.querySelectorAll('thead th[scope=col]').length, rows = table.querySelectorAll('tbody tr').length;
    return columns > 0 && rows > 0 && table.querySelectorAll('tbody td').length === columns * rows && table.getBoundingClientRect().height > 0; }"""


def _matrix(page: Page, timeout_ms: int = 120_000) -> dict:
    """Wait until the whole matrix is drawn; its column headings (models), row headings (cases) and cell texts by case, column."""
    page.wait_for_function(WHOLE_MATRIX, timeout=timeout_ms)
    return page.evaluate(
        """() => { const table = document.querySelector('table.matrix-grid');
        const x = [...table.querySelectorAll('thead th[scope=col]')].map(th => th.textContent);
        const y = [...table.querySelectorAll('tbody th[scope=row]')].map(th => th.textContent);
        const cells = [...table.querySelectorAll('tbody tr')].map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent));
        return {x: x, y: y, cells: Object.fromEntries(y.map((case_, i) => [case_, cells[i]]))}; }"""
    )


def _idle(page: Page) -> None:
    """Wait until the page's script run has ended: Streamlit shows its status widget only while one is under way."""
    expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=120_000)


def _cell(page: Page, column: str, row: str):
    """The matrix cell of the model whose column heading is `column`, in the case `row`."""
    columns = page.locator("table.matrix-grid thead th[scope=col]").all_text_contents()
    return page.locator(f"table.matrix-grid tbody td[data-case='{row}']").nth(columns.index(column))


def _colour_at(page: Page, column: str, row: str) -> tuple[int, int, int]:
    """The colour the cell is painted in, once the page's script run has ended (a rerun redraws the table: a pixel
    read while it moves reads the page behind it)."""
    _idle(page)
    cell = _cell(page, column, row)
    expect(cell).to_be_visible(timeout=120_000)
    painted = cell.evaluate("element => getComputedStyle(element).backgroundColor")
    red, green, blue = (int(part) for part in re.findall(r"\d+", painted)[:3])
    return red, green, blue


TASKS = "?golden=golden/tasks.yaml"  # the demo's nightly set, run last: the default


def test_the_matrix_shows_one_golden_set_the_one_run_last_by_default_with_its_path_and_hash(dashboard, page):
    page.goto(dashboard)
    drawn = _matrix(page)
    # the demo ran its nightly set last: its 28 cases, its three models side by side; no other set's rows mixed in
    assert drawn["x"] == DEMO_COLUMNS and len(drawn["y"]) == 28
    expect(page.get_by_text(re.compile(r"^Golden set golden/tasks\.yaml · hash [0-9a-f]{12} · 8 runs$"))).to_be_visible()
    assert "golden=golden%2Ftasks.yaml" in page.url or "golden=golden/tasks.yaml" in page.url
    # failures and the drift drops are in view on the first page, with the way to the Drift page
    assert any(text.split("/")[0] != text.split("/")[1] for cells in drawn["cells"].values() for text in cells if "/" in text)
    expect(page.get_by_text(re.compile(r"^Drift: 4 open drop\(s\) in this golden set"))).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("Open the Drift page"))).to_be_visible()
    # another set, picked in the sidebar: all of its cases, and only its models
    page.get_by_role("combobox", name="Golden set").click()
    page.get_by_role("option", name="golden/multiturn.yaml").click()
    expect(page.get_by_text(re.compile(r"^Golden set golden/multiturn\.yaml · hash [0-9a-f]{12} · 1 run$"))).to_be_visible(timeout=120_000)
    page.wait_for_function("() => document.querySelectorAll('table.matrix-grid tbody tr').length === 8", timeout=120_000)


def test_the_matrix_is_drawn_with_simulated_columns_without_loading_the_chart_library(dashboard, page):
    page.goto(dashboard + TASKS)
    drawn = _matrix(page)
    assert drawn["x"] == DEMO_COLUMNS
    assert len(drawn["y"]) == 28 and drawn["y"] == sorted(drawn["y"])  # the first case on top
    assert drawn["cells"]["calendar-day"][1:] == ["0/5", "5/5"]  # every model ran every case: no grey "not run" cell
    assert not [cells for cells in drawn["cells"].values() if "not run" in cells]
    # the cells are really painted: red where the drifting model failed after its update, green where it passed
    assert _colour_at(page, "sim/script:assistant-latest.yaml (simulated)", "calendar-day") == FAIL_COLOUR
    assert _colour_at(page, "sim/script:assistant-pinned.yaml (simulated)", "calendar-day") == PASS_COLOUR
    expect(page.get_by_text("Layer 0 (conformance) of this server: CONFORMANT")).to_be_visible()
    # the home page is named, and Streamlit's deploy menu is not offered
    assert page.locator("[data-testid=stSidebarNav] li").all_inner_texts()[0] == "Matrix"
    expect(page.get_by_role("button", name="Deploy")).to_have_count(0)
    # the page drew the matrix without plotly.js, the 4.7 MB chunk that held its first paint back by seconds
    _idle(page)
    assert not page.evaluate("() => performance.getEntriesByType('resource').filter(e => e.name.includes('PlotlyChart')).length")


def test_a_click_on_a_cell_opens_its_drill_down_right_under_the_matrix(dashboard, page):
    page.goto(dashboard + TASKS)
    _matrix(page)
    cell = _cell(page, "sim/script:assistant-latest.yaml (simulated)", "calendar-day")
    assert "pass^k 0.00" in (cell.locator("a").get_attribute("title") or "")  # what the heatmap's hover said, on pointing at it
    cell.click()
    page.wait_for_url(re.compile(r"case=calendar-day"), timeout=120_000)
    # the page opens scrolled to the drill-down: its heading is on screen, not under a 28-row matrix
    heading = page.get_by_role("heading", name="Drill-down")
    expect(heading).to_be_in_viewport(timeout=120_000)
    assert "assistant-latest.yaml" in page.url and "golden=golden" in page.url  # the link keeps the page's filters
    _matrix(page)
    expect(page.get_by_text(re.compile(r"assistant-latest\.yaml \(simulated\) · calendar-day · run [\w-]+ · 0/5 passed"))).to_be_visible(timeout=120_000)
    expect(page.get_by_text("Attempt 1: FAIL")).to_be_visible()
    # the attempt reads as a conversation: the user's request, the reason it failed, expected beside actual calls
    expect(page.get_by_text("Why it failed").first).to_be_visible()
    expect(page.get_by_text("Expected calls (golden file as it is now)").first).to_be_visible()
    expect(page.get_by_text("User", exact=True).first).to_be_visible()
    # the drill-down comes right after the matrix, before the summary; the long Cells table is folded away
    matrix_bottom = page.locator("table.matrix-grid").bounding_box()
    attempt_top = page.get_by_text("Attempt 1: FAIL").bounding_box()
    summary_top = page.get_by_role("heading", name="Per-model summary").bounding_box()
    assert matrix_bottom and attempt_top and summary_top
    assert matrix_bottom["y"] + matrix_bottom["height"] < attempt_top["y"] < summary_top["y"]
    expect(page.get_by_text(re.compile(r"^Cells: every model × case of the matrix \(84 rows\)$"))).to_be_visible()
    expect(page.get_by_role("button", name="Download the matrix as CSV")).to_be_hidden()
    # the chosen cell is framed, and only it
    framed = page.evaluate("() => [...document.querySelectorAll('table.matrix-grid td')].filter(td => td.style.outlineStyle === 'solid').length")
    assert framed == 1 and _cell(page, "sim/script:assistant-latest.yaml (simulated)", "calendar-day").evaluate("td => td.style.outlineStyle") == "solid"
    # the matrix and the drill-down under it, as the README shows them: Streamlit scrolls inside its main pane, so the
    # window is made tall enough to hold both, the pane scrolled to the matrix
    page.set_viewport_size({"width": 1400, "height": 2400})
    page.locator("table.matrix-grid").evaluate("element => element.scrollIntoView({block: 'start'})")
    matrix, attempt = page.locator("table.matrix-grid").bounding_box(), page.get_by_text("Attempt 1: FAIL").bounding_box()
    assert matrix and attempt
    clip = {"x": 0, "y": max(matrix["y"] - 40, 0), "width": 1400, "height": min(attempt["y"] - matrix["y"] + 480, 2400 - max(matrix["y"] - 40, 0))}
    page.screenshot(path=str(README_SHOTS / "matrix.png"), clip=clip)


def test_the_matrix_downloads_as_csv(dashboard, page):
    page.goto(dashboard + TASKS)
    _matrix(page)
    page.get_by_text(re.compile(r"^Cells: every model × case")).click()  # folded under the summary
    _idle(page)  # a script run still under way may replace the file the button points at
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Download the matrix as CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert len(rows) == 3 * 28  # the nightly set's three models; the other golden sets are not in this matrix
    assert {"model", "case_id", "passes", "runs", "attempts", "errored", "pass_rate"} <= set(rows[0])
    calendar = [r for r in rows if r["case_id"] == "calendar-day" and "assistant-latest" in r["model"]]
    assert [(r["passes"], r["runs"], r["errored"]) for r in calendar] == [("0", "5", "0")]


def test_the_latency_page_says_no_price_for_simulated_models_instead_of_drawing_empty_cost_charts(dashboard, page):
    page.goto(f"{dashboard}/Latency_and_cost{TASKS}")
    sentence = f"No price for {', '.join(DEMO_COLUMNS)}: cost is never guessed, so it is not drawn."
    expect(page.get_by_text(sentence, exact=True)).to_have_count(2, timeout=120_000)  # per model and over time
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    expect(page.locator(".js-plotly-plot")).to_have_count(3)  # latency per model, per tool, over time
    titles = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(t => t.textContent)")
    assert "Cost" not in titles, titles


def _readme_pages() -> dict[str, list[str]]:
    """The dashboard pages docs/dashboard.md lists, in order, each with the texts it quotes “thus” as shown on that page."""
    section = (ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
    bullets = re.findall(r"^- \*\*(.+?)\*\*(.*?)(?=^- \*\*|^\S|\Z)", section, re.S | re.M)
    return {name: [" ".join(quote.split()) for quote in re.findall(r"“(.+?)”", text, re.S)] for name, text in bullets}


def test_the_readme_names_the_pages_as_the_sidebar_does_and_what_it_quotes_is_on_them(dashboard, page):
    pages = _readme_pages()
    assert sum(len(quoted) for quoted in pages.values()) >= 6, pages  # the README still quotes the screen
    page.goto(dashboard + TASKS)
    _matrix(page)
    assert page.locator("[data-testid=stSidebarNav] li").all_inner_texts() == list(pages)
    for name, quoted in pages.items():
        page.goto(f"{dashboard}/{'' if name == 'Matrix' else name.replace(' ', '_')}{TASKS}")
        for text in quoted:
            expect(page.get_by_text(text).first, f"the README quotes “{text}” on the {name} page").to_be_visible(timeout=120_000)


def test_the_drift_page_shows_the_change_points(dashboard, page):
    page.goto(f"{dashboard}/Drift")
    expect(page.get_by_text("4 open drop(s); 0 recovered; over 8 runs.")).to_be_visible(timeout=120_000)
    page.wait_for_selector(".js-plotly-plot .hm image", timeout=120_000)
    markers = page.evaluate("() => document.querySelector('.js-plotly-plot').data[1].x.length")
    assert markers == 4  # one per change point
    pages = page.locator("[data-testid=stSidebarNav] li").all_inner_texts()
    # the same list whichever page a visit starts on
    assert pages == ["Matrix", "Runs", "Compare", "Golden sets", "Latency and cost", "Drift", "Flaky cases", "Judge", "Run", "Export"]
    # the cause reads as plain text: no markup characters, a sim script by its file name, its temporary folder never
    expect(page.get_by_text(re.compile(r"reported version sim-latest-2026-11 instead of sim-latest-2026-05|changed the search_knowledge_base"))).to_be_visible()
    texts = page.locator("[data-testid=stText]").all_inner_texts()
    assert texts and not [text for text in texts if "`" in text or "/pytest-" in text], texts


def test_a_shared_runs_url_reopens_its_filters_and_pick_and_opens_the_two_runs_on_the_compare_page(dashboard, demo_db, page):
    nightly = queries.run_list(demo_db[0], queries.RunFilters(golden_paths=("golden/tasks.yaml",), kinds=("run",)))
    older, newer = str(nightly["run_id"].iloc[-1]), str(nightly["run_id"].iloc[0])  # the first night and the last
    page.goto(f"{dashboard}/Runs?golden=golden/tasks.yaml&kind=run&runs={newer}&runs={older}")
    expect(page.get_by_text(f"{len(nightly)} of ", exact=False).first).to_be_visible(timeout=120_000)
    expect(page.get_by_text(f"baseline {older} · candidate {newer}")).to_be_visible()
    page.get_by_role("button", name="Compare these two runs").click()
    expect(page.get_by_text("Delta: candidate − baseline")).to_be_visible(timeout=120_000)
    assert f"baseline={older}" in page.url and f"candidate={newer}" in page.url
    expect(page.locator(".js-plotly-plot")).to_have_count(3, timeout=120_000)  # both matrices and the delta matrix
    # The delta matrix colours only the significant cells. Between two single nights (5 attempts each) even the updated
    # model's 5/5 -> 0/5 drops are not significant once corrected across the 84 cases: they read "-1.00 n.s." on grey,
    # with the runs per arm that would tell them.
    delta = page.evaluate(
        """() => { const gd = document.querySelectorAll('.js-plotly-plot')[2];
        const z = Array.from(gd.data[1].z, row => Array.from(row, v => (v === null || Number.isNaN(v)) ? null : v));
        return {text: Array.from(gd.data[2].text), z: z, shapes: (gd.layout.shapes || []).length}; }"""
    )
    dropped = [text for text in delta["text"] if text.startswith("-1.00 n.s.")]
    assert dropped and all(re.fullmatch(r"-1\.00 n\.s\.<br>needs \d+ runs", text) for text in dropped), delta
    assert all(value is None for row in delta["z"] for value in row), delta
    # Pooled over their 28 cases, models are significantly worse: the red heading says which, before the counts, and the
    # cells that verdict rests on are outlined in the delta matrix.
    heading = page.get_by_text(re.compile(r"^Significantly worse or not measured: .*assistant-latest\.yaml \(simulated\), its cases pooled: \d+/\d+ → \d+/\d+"))
    expect(heading).to_be_visible()
    expect(heading).to_contain_text(re.compile(r"cases: 0 better, 0 worse, 84 no difference, 0 inconclusive; models, their cases pooled: 0 better, [23] worse"))
    assert delta["shapes"] >= 4
    shared = page.url
    page.goto(shared)  # the URL alone reopens the same view
    expect(page.get_by_text("Delta: candidate − baseline")).to_be_visible(timeout=120_000)
    expect(page.get_by_text(f"baseline {older} · candidate {newer} · golden/tasks.yaml", exact=False)).to_be_visible()


def test_a_sim_run_launched_from_the_run_page_completes_and_shows_in_the_matrix(dashboard, page):
    sent: list[object] = []  # what the page sends its server (each rerun of the progress panel is one request)
    page.on("websocket", lambda socket: socket.on("framesent", lambda payload: sent.append(payload)))
    page.goto(f"{dashboard}/Run")
    runs = page.get_by_label("Runs per case")
    runs.fill("1")
    runs.press("Enter")  # Enter in a field does not start a run; only the button does
    start = page.get_by_role("button", name="Start run")
    start.click()
    started = page.get_by_text(re.compile(r"Started run [\w-]+"))
    expect(started).to_be_visible(timeout=120_000)
    run_id = started.inner_text().split()[-1]
    start.click()  # a second click while it runs: refused, not a twin run
    expect(page.get_by_text(f"an identical run is already running ({run_id}); wait for it or cancel it first")).to_be_visible(timeout=120_000)
    expect(page.get_by_text(re.compile(rf"{run_id} · complete"))).to_be_visible(timeout=120_000)
    cards = page.get_by_text(re.compile(r"^\d{8}-\d{6}-\w{6} · "))
    expect(cards).to_have_count(1, timeout=120_000)  # one launch: the Enter key and the second click started nothing (waits out a redraw)
    # the finished run shows its scores and opens them, in this tab, on its own golden set
    expect(page.get_by_text(re.compile(r"^sim/lexical \(simulated\): pass rate \d+% \(\d+/28 attempts passed\)$"))).to_be_visible(timeout=120_000)
    # the panel stopped polling once the run ended: the page asks the server for nothing more
    asked = len(sent)
    page.wait_for_timeout(5_000)  # two and a half of the old 2 s polls: watching for silence, not waiting for readiness
    assert len(sent) == asked, f"{len(sent) - asked} requests after the run ended"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "run_page_finished_run.png"), full_page=True)
    page.screenshot(path=str(README_SHOTS / "run_page.png"), full_page=True)
    page.get_by_role("button", name="Open this run in the matrix").click()
    expect(page).to_have_url(re.compile(rf"\?(?=.*run={run_id})(?=.*golden=golden%2Ftasks\.yaml)"), timeout=120_000)
    assert len(page.context.pages) == 1  # the same tab
    drawn = _matrix(page)
    assert drawn["x"] == ["sim/lexical (simulated)"]
    assert len(drawn["y"]) == 28
    # a single model's column is painted under its own label (pass or fail colour), not next to it
    assert _colour_at(page, "sim/lexical (simulated)", "account-manager-initech") in (PASS_COLOUR, FAIL_COLOUR)


def test_the_run_page_takes_any_litellm_model_string_and_names_the_missing_key_before_starting(dashboard, page):
    page.goto(f"{dashboard}/Run")
    models = page.get_by_role("combobox", name="Models")
    models.click()
    models.fill("openai/gpt-4o-mini")
    models.press("Enter")  # a model the page does not offer: typed, and taken
    page.get_by_text("A stdio command", exact=True).click()
    page.get_by_label("Command (with a stdio command)").fill(f"{sys.executable} -m evalcore.demo_server --stdio")
    page.get_by_role("button", name="Start run").click()
    # the key comes from the environment only: none there, so the run is refused before it starts, saying which
    expect(page.get_by_text(re.compile(r"openai/gpt-4o-mini: .*OPENAI_API_KEY"))).to_be_visible(timeout=120_000)
    expect(page.get_by_text(re.compile(r"Started run"))).to_have_count(0)


def test_the_empty_state_button_builds_the_demo_and_the_matrix_appears_on_its_own(empty_dashboard, page):
    from evalcore.behaviour import jobs

    url, db = empty_dashboard
    page.goto(url)
    page.get_by_role("button", name=re.compile(r"Build the demo history")).click()
    try:
        expect(page.get_by_text(re.compile(r"Building the demo history: the Layer 2 and multi-turn sets \(\d of 3\)"))).to_be_visible(timeout=120_000)
        expect(page.get_by_text("run `python -m evalcore demo` or `make run`", exact=False)).to_have_count(0)  # no advice to build what is being built
        # no click or reload: the page reloads itself once the first run is stored (minutes on a busy machine)
        drawn = _matrix(page, timeout_ms=240_000)
        assert drawn["x"] and all(label.endswith(" (simulated)") for label in drawn["x"]) and drawn["y"]  # the first night, as far as stored
    finally:
        for job in jobs.list_jobs(db):
            jobs.cancel(job)
            wait_for_exit(job.pid, what=f"cancelled job {job.run_id}")


# --- untrusted text stays inert in charts, and long values stay bounded ----------------------------

PAYLOAD = "peek<b>BOLD</b><a href=x>L</a>"
QUOTED_REASON = 'the server said "stop" & <i>meant</i> it'
LONG_TEXT = "x" * 100_000


@pytest.fixture(scope="module")
def hostile_dashboard(tmp_path_factory) -> Iterator[str]:
    """The dashboard over a store holding one run whose model, tool and reason carry markup, and whose answer is 100 KB."""
    import json
    from datetime import date

    from evalcore.records import AttemptRecord, AttemptScore, Score, ToolCall
    from evalcore.store import behaviour as store

    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "evals.duckdb"
    run_id = "hostile-run"
    store.create_run(
        db, run_id=run_id, run_date=date(2026, 11, 30), golden_path="golden/tasks.yaml", golden_hash="h", server_target="http://127.0.0.1:1/mcp",
        server_name="hostile 1.0", server_fingerprint="f", server_tools=[{"name": PAYLOAD, "description": PAYLOAD}], models=[f"openai/{PAYLOAD}"],
        runs=1, config={},
    )  # fmt: skip
    execution = {"tool": PAYLOAD, "arguments": {}, "result": {"content": [{"type": "text", "text": LONG_TEXT}]}, "error": None, "is_error": False}
    execution |= {"latency_ms": 5.0, "request_ids": [1], "error_type": None, "fault": None}
    transcript = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "peek at it"}], "turns": [], "executions": [execution]}
    record = AttemptRecord(
        model=f"openai/{PAYLOAD}", case_id="peek-case", attempt=1, case_hash="c", case_kind="hard", simulated=False, model_version=PAYLOAD,
        score=AttemptScore((Score("selection", 0.0, True, (QUOTED_REASON,)),), False, (QUOTED_REASON,)), tool_calls=(ToolCall("call_1", PAYLOAD, {}),),
        final_text=LONG_TEXT, stop_reason="final", error=None, latency_ms=12.0, input_tokens=10, output_tokens=5, cost_usd=None, retries=0,
        transcript_json=json.dumps(transcript),
    )  # fmt: skip
    # an attempt that ran out of steps, and one whose model call failed (errored: no verdict, yet run)
    looping = {"messages": transcript["messages"], "turns": [{"latency_ms": 1.0}] * 8, "executions": []}
    unfinished = {"model": f"openai/{PAYLOAD}", "attempt": 1, "case_hash": "c", "case_kind": "hard", "simulated": False, "model_version": PAYLOAD}
    unfinished |= {"tool_calls": (), "final_text": None, "latency_ms": 8.0, "input_tokens": 10, "output_tokens": 5, "cost_usd": None, "retries": 0}
    step_limited = AttemptRecord(
        case_id="step-limit-case", score=AttemptScore((), False, ("no final answer within 8 model turns",)), stop_reason="step_limit",
        error="no final answer within 8 model turns", transcript_json=json.dumps(looping), **unfinished,
    )  # fmt: skip
    errored = AttemptRecord(
        case_id="upstream-error-case", score=AttemptScore((), False, ("model call failed",)), stop_reason="model_error",
        error="provider answered 503", transcript_json=json.dumps({**looping, "turns": []}), error_kind="provider", **unfinished,
    )  # fmt: skip
    store.write_attempts(db, run_id, [record, step_limited, errored])
    finish_recorded_run(db, run_id, [record, step_limited, errored])
    yield from _serve(db, folder)


def _markup_in_charts(page: Page) -> dict:
    """What plotly drew from label markup in every chart on the page: links, bold or italic texts, and each chart's texts."""
    return page.evaluate(
        """() => { const svgs = [...document.querySelectorAll('.js-plotly-plot .main-svg')];
        const tspans = svgs.flatMap(s => [...s.querySelectorAll('tspan')]);
        return {links: svgs.flatMap(s => [...s.querySelectorAll('a')]).length,
                styled: tspans.filter(t => /bold|italic/.test(t.getAttribute('style') || '')).map(t => t.textContent),
                texts: svgs.flatMap(s => [...s.querySelectorAll('text')]).map(t => t.textContent)}; }"""
    )


def test_markup_in_tool_and_model_names_shows_as_text_on_the_latency_page(hostile_dashboard, page):
    page.goto(f"{hostile_dashboard}/Latency_and_cost")
    page.wait_for_selector(".js-plotly-plot .xtick text", timeout=120_000)
    expect(page.locator(".js-plotly-plot .xtick text").filter(has_text=re.compile(r"^peek"))).to_have_count(1, timeout=120_000)  # the tool chart
    drawn = _markup_in_charts(page)
    assert drawn["links"] == 0 and not [text for text in drawn["styled"] if text in ("BOLD", "L", "meant")], drawn["styled"]
    assert PAYLOAD in drawn["texts"]  # the tool's tick label, character for character
    assert f"openai/{PAYLOAD}" in drawn["texts"]  # the model's


def test_matrix_labels_and_tooltips_show_quotes_and_markup_as_typed_and_long_values_wait_behind_show_all(hostile_dashboard, page):
    page.goto(hostile_dashboard)
    drawn = _matrix(page)
    assert drawn["x"] == [f"openai/{PAYLOAD}"]  # the model's heading, character for character
    tip = _cell(page, f"openai/{PAYLOAD}", "peek-case").locator("a").get_attribute("title") or ""
    assert QUOTED_REASON in tip and f"openai/{PAYLOAD}" in tip and "&quot;" not in tip and "&amp;" not in tip
    # no element came from the labels' markup: the table holds its own cells, headings and links only
    tags = page.evaluate("() => [...new Set([...document.querySelectorAll('table.matrix-grid *')].map(e => e.tagName))].sort()")
    assert tags == ["A", "TBODY", "TD", "TH", "THEAD", "TR"], tags
    hrefs = page.evaluate("() => [...document.querySelectorAll('table.matrix-grid a')].map(a => a.getAttribute('href'))")
    assert hrefs and all(href.startswith("?") and "model=openai%2Fpeek%3Cb%3E" in href for href in hrefs), hrefs
    # the 100 KB answer and tool result: cut, with the whole value behind an expander, and the page stays short
    expect(page.get_by_text("Final answer")).to_be_visible(timeout=120_000)
    height = page.evaluate("() => document.querySelector('[data-testid=stMain]')?.scrollHeight ?? document.body.scrollHeight")
    assert height < 8_000, f"the page is {height} px tall"
    expect(page.get_by_text("show all (100 KB)").first).to_be_visible()
    assert page.get_by_text("show all (100 KB)").count() == 1  # the answer; the tool result is folded, its whole value a download


def test_an_errored_cell_says_so_and_a_step_limited_attempt_says_it_at_its_top(hostile_dashboard, page):
    page.goto(f"{hostile_dashboard}/?model={quote(f'openai/{PAYLOAD}')}&case=step-limit-case")
    drawn = _matrix(page)
    # the errored case reads "1 errored" (it was run: its one attempt errored), not "not run"
    assert drawn["cells"] == {"peek-case": ["0/1"], "step-limit-case": ["0/1"], "upstream-error-case": ["1 errored"]}
    assert _colour_at(page, f"openai/{PAYLOAD}", "upstream-error-case") == (0xA6, 0xA6, 0xA6)  # dark grey
    expect(page.get_by_text("Attempt 1: FAIL · step limit reached after 8 turns")).to_be_visible(timeout=120_000)


@pytest.fixture(scope="module")
def judge_dashboard(tmp_path_factory, reference_url) -> Iterator[tuple[str, JudgedRun]]:
    """The dashboard over a run graded by sim/judge, three of its six attempts labelled by a person."""
    folder = tmp_path_factory.mktemp("judge-browser")
    # in a thread of its own: the run's event loop cannot start in this one once Playwright's runs here
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as worker:
        run = worker.submit(labelled_run, folder, reference_url).result()
    for url in _serve(run.db, folder):
        yield url, run


def test_labelling_an_attempt_on_the_drill_down_changes_the_judge_pages_figures(judge_dashboard, page):
    url, run = judge_dashboard
    page.goto(f"{url}/Judge")
    expect(page.get_by_text(re.compile(r"^sim/judge · rubric [0-9a-f]{12}: uncalibrated \(3 label\(s\), fewer than 30\)$"))).to_be_visible(timeout=120_000)
    page.goto(url + queries.drill_down_link(run.run_id, run.model, "greet", 3))  # an attempt of the labelling queue
    expect(page.get_by_text("Attempt 3: PASS")).to_be_visible(timeout=120_000)
    page.get_by_label("Note (optional)").fill("says goodbye, not hello")
    page.get_by_label("Note (optional)").press("Enter")
    _idle(page)
    page.get_by_role("button", name="Human: does not").click()
    expect(page.get_by_text("Human label: does not meet the rubric", exact=False)).to_be_visible(timeout=120_000)
    page.goto(f"{url}/Judge")
    expect(page.get_by_text(re.compile(r"^sim/judge · rubric [0-9a-f]{12}: uncalibrated \(4 label\(s\), fewer than 30\)$"))).to_be_visible(timeout=120_000)


GOLDEN_DRAFTS = """\
# Drafted by sim/drafter (simulated) on 2026-12-05.
cases:
  - id: hand-written
    prompt: "Hi there!"
    expect_tool: null

  # server answered: { "city": "Paris", "temperature": 21.5 }
  - id: weather-draft
    prompt: "Weather in Paris?"
    expect_tool: get_weather
    expect_args: {city: Paris}
    review: {status: draft, by: sim/drafter, at: '2026-12-05', checked: executed}

  - id: ghost-draft
    prompt: "Book a flight"
    expect_tool: null
    review: {status: draft, by: sim/drafter, at: '2026-12-05', checked: schema}
"""


def test_the_golden_sets_page_accepts_and_rejects_drafts_in_the_file(empty_dashboard, page, tmp_path):
    url, _ = empty_dashboard
    golden = tmp_path / "drafts.yaml"
    golden.write_text(GOLDEN_DRAFTS)
    page.goto(f"{url}/Golden_sets?file={quote(str(golden))}")
    expect(page.get_by_text("3 cases: 2 draft, 0 accepted, 1 hand-written")).to_be_visible(timeout=120_000)
    expect(page.get_by_text('# server answered: { "city": "Paris", "temperature": 21.5 }').first).to_be_visible()  # what the reviewer judges
    # Each button by its case (Streamlit marks a keyed widget with the class st-key-KEY), once the last rerun is drawn.
    page.locator(".st-key-accept-weather-draft button").click()
    expect(page.get_by_text("3 cases: 1 draft, 1 accepted, 1 hand-written")).to_be_visible(timeout=120_000)
    expect(page.locator(".st-key-accept-weather-draft")).to_have_count(0, timeout=120_000)
    page.locator(".st-key-reject-ghost-draft button").click()
    expect(page.get_by_text("2 cases: 0 draft, 1 accepted, 1 hand-written")).to_be_visible(timeout=120_000)
    expect(page.get_by_text("No draft case left to review in this file.")).to_be_visible()
    text = golden.read_text()
    assert "ghost-draft" not in text and "review: {status: accepted, by: human, at: '" in text
    assert text.startswith("# Drafted by sim/drafter (simulated)") and "# server answered:" in text
