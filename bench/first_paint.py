"""How long a new user waits: `make run` on a fresh clone, as typed, to the dashboard answering and to its first page.

    .venv/bin/python bench/first_paint.py [--matrix-only] [--repeat N]

Clones this checkout into a temporary folder, runs `make run PORT=N` there as a cold process (it creates its own
.venv and installs, from pip's cache when it is warm), and measures from the command's start:

- install: until the dashboard's port answers HTTP (the venv built, Streamlit started);
- first paint: until headless Chromium (Debian's, as the browser tests use it) shows the page's first words, the demo
  banner ("Building the demo history") or the matrix.

Then the matrix on a dashboard already running over the finished demo store (`evalcore demo`, as `make run` builds
it): a fresh dashboard process each time, so the page's script runs cold (its imports, its queries, no cache), and
the time from Chromium's navigation to the whole matrix drawn (the matrix table with every model × case cell in it,
visible); the median of `--repeat` (default 3).
`--matrix-only` measures only that.

It prints the load average beside the figures; a figure taken above load 4 is marked not for publishing. The
clone, its .venv and its stores are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from user_environment import user_environment  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
LIMIT_S = 900.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (loopback only)
            return bool(response.status == 200)
    except OSError:
        return False


def _first_words(url: str, started: float) -> float:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page()
        page.goto(url)
        page.get_by_text("Building the demo history").or_(page.get_by_text("Model × case matrix")).first.wait_for(timeout=LIMIT_S * 1000)
        painted = time.monotonic() - started
        browser.close()
    return painted


# The matrix is whole when its table holds a cell for every model (column heading) in every case (row).
WHOLE_MATRIX = """() => { const table = document.querySelector('table.matrix-grid'); if (!table) return false;
    const columns = table.querySelectorAll('thead th[scope=col]').length, rows = table.querySelectorAll('tbody tr').length;
    return columns > 0 && rows > 0 && table.querySelectorAll('tbody td').length === columns * rows && table.getBoundingClientRect().height > 0; }"""


def _matrix_paint(url: str) -> float:
    """Seconds from Chromium's navigation to the whole matrix drawn (the browser's own start left out)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page()
        started = time.monotonic()
        page.goto(url)
        page.wait_for_function(WHOLE_MATRIX, timeout=LIMIT_S * 1000)
        painted = time.monotonic() - started
        browser.close()
    return painted


def matrix_on_running_dashboard(repeat: int) -> int:
    """The matrix's first paint on a running dashboard over the demo store, each time a cold script run."""
    load_before = os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="evalcore-matrix-paint-"))
    db = workdir / "evals.duckdb"
    environment = {**user_environment(), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    painted = []
    try:
        subprocess.run([sys.executable, "-m", "evalcore", "demo", "--db", str(db)], cwd=ROOT, env=environment, check=True, stdout=subprocess.DEVNULL)
        for _ in range(repeat):
            port = _free_port()
            url = f"http://127.0.0.1:{port}/"
            command = [sys.executable, "-m", "evalcore", "dashboard", "--db", str(db), "--port", str(port), "--no-demo"]
            process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                started = time.monotonic()
                while not _answers(f"{url}_stcore/health"):
                    if process.poll() is not None or time.monotonic() - started > LIMIT_S:
                        print("the dashboard stopped or did not answer", file=sys.stderr)
                        return 1
                    time.sleep(0.2)
                painted.append(_matrix_paint(url))
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(60)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load = max(load_before, os.getloadavg()[0])
    verdict = "publishable" if load <= 4 else "NOT for publishing (load above 4)"
    shown = ", ".join(f"{seconds:.2f}" for seconds in painted)
    print(f"matrix on a running dashboard over the demo store, cold script run: drawn {statistics.median(painted):.2f} s after navigation (median of {shown})")
    print(f"load average {load:.2f} (the higher of before and after): {verdict}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matrix-only", action="store_true", help="measure only the matrix on a running dashboard")
    parser.add_argument("--repeat", type=int, default=3, help="cold script runs of the matrix page to take the median of (default 3)")
    args = parser.parse_args()
    if not args.matrix_only and make_run_first_page() != 0:
        return 1
    return matrix_on_running_dashboard(args.repeat)


def make_run_first_page() -> int:
    """`make run` on a fresh clone to the dashboard answering and its first page painted."""
    load_before = os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="evalcore-first-paint-"))
    clone = workdir / "evalcore"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    started = time.monotonic()
    process = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=clone,
        env=user_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while not _answers(url):
            if process.poll() is not None:
                print(f"make run stopped with {process.returncode} before the dashboard answered", file=sys.stderr)
                return 1
            if time.monotonic() - started > LIMIT_S:
                print(f"the dashboard did not answer within {LIMIT_S:.0f} s", file=sys.stderr)
                return 1
            time.sleep(0.2)
        answered = time.monotonic() - started
        painted = _first_words(url, started)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(60)
        subprocess.run(["pkill", "-f", str(workdir)], check=False)  # the demo history it started in the background
        shutil.rmtree(workdir, ignore_errors=True)
    load = max(load_before, os.getloadavg()[0])
    verdict = "publishable" if load <= 4 else "NOT for publishing (load above 4)"
    print(f"make run on a fresh clone: dashboard answering after {answered:.1f} s, first page painted after {painted:.1f} s")
    print(f"load average {load:.2f} (the higher of before and after): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
