"""Command: `python -m evalcore dashboard` — start the Streamlit dashboard on 127.0.0.1 over a store.

With a store that holds no behaviour runs yet (a first `make run`), it first
starts building the simulated demo history in the background, so the pages
fill in within seconds and the whole history lands a minute or two later;
`--no-demo` skips that. The dashboard process replaces this one (Ctrl-C stops it).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from evalcore.commands.options import db_option
from evalcore.errors import ConfigError
from evalcore.paths import bundled

NAME = "dashboard"
SUMMARY = "start the dashboard on 127.0.0.1 (first time: builds the simulated demo history too)"
ORDER = 90
APP = bundled("app.py")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    db_option(parser, "DuckDB store to show")
    parser.add_argument("--port", type=int, default=8501, help="port on 127.0.0.1 (default 8501)")
    parser.add_argument("--no-demo", action="store_true", help="do not build the demo history into an empty store")


def streamlit_command(port: int) -> list[str]:
    """The `streamlit run` command line: headless, loopback only, no usage statistics sent anywhere, no deploy menu, no file
    watcher; started through `evalcore.dashboard.warmup`, which loads the pages' heavy libraries while Streamlit starts."""
    return [
        sys.executable, "-m", "evalcore.dashboard.warmup", "run", str(APP), "--server.headless", "true", "--server.address", "127.0.0.1",
        "--server.port", str(port), "--browser.gatherUsageStats", "false",
        "--client.toolbarMode", "minimal",  # no "Deploy" button: this dashboard is a local tool
        # No watching of source files for edits (that is for developing a page): with the .venv inside the project, as
        # `make run` builds it, Streamlit would take every library a page loads for the app's own code and watch each
        # module's file, which held the first page back by 1-2 s.
        "--server.fileWatcherType", "none",
    ]  # fmt: skip


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module blocked in sys.modules, or a broken install
        return False


def command(args: argparse.Namespace) -> int:
    from evalcore.behaviour import jobs
    from evalcore.behaviour.history import count_behaviour_runs

    if not _installed("streamlit"):
        raise ConfigError("the dashboard needs its extra libraries: pip install 'mcp-evalcore[dashboard]' (streamlit, plotly, pandas)")
    db = Path(args.db).resolve()
    db.parent.mkdir(parents=True, exist_ok=True)
    from evalcore.store.db import upgrade

    upgrade(db)  # the pages read the store read-only: a store an older evalcore wrote is migrated before they open it
    if not args.no_demo and not count_behaviour_runs(db):
        job = jobs.launch_demo(db)
        print(f"{db} holds no behaviour runs yet: building the simulated demo history in the background (log: {job.log})")
    print(f"dashboard: http://127.0.0.1:{args.port} over {db} (Ctrl-C stops it)", flush=True)
    os.execve(sys.executable, streamlit_command(args.port), {**os.environ, "EVALCORE_DB": str(db)})
    return 0  # not reached: the dashboard replaced this process
