"""`python -m evalcore.dashboard.warmup run app.py ...`: `streamlit run app.py ...`, the heavy libraries loaded as it starts.

A page's script imports pandas, DuckDB and the store's readers when the first browser connects: on a fresh
dashboard that is about a second, on a busy machine, before the page can draw anything. `evalcore dashboard`
starts Streamlit through here, so one background thread imports them while Streamlit starts and the browser loads
its frontend. `app.py` waits for that thread (`wait`) before its own imports, so no module is ever imported by two
threads at once. Only modules without Streamlit caches are loaded here: those would register with Streamlit's
runtime, which does not exist yet.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading

MODULES = ("pandas", "duckdb", "evalcore.dashboard.queries", "evalcore.dashboard.figures", "evalcore.behaviour.jobs", "evalcore.golden.loader")

_loaded = threading.Event()
_loaded.set()  # nothing to wait for unless `main` started the loading (`streamlit run app.py` directly, the tests' AppTest)


def wait() -> None:
    """Return once the background imports `main` started are done (at once when none were started)."""
    _loaded.wait()


def _load() -> None:
    try:
        for name in MODULES:
            importlib.import_module(name)
        # The first element a Streamlit process draws asks `inspect` where each frame of its stack comes from (is it
        # a REPL?), which makes `inspect` read the path of every module loaded, once: ~0.1 s done here, not on the first page.
        inspect.stack()
    finally:
        _loaded.set()


def main() -> None:
    """Start the imports in the background, then run Streamlit's command line with this process's arguments."""
    from streamlit.web import cli

    _loaded.clear()
    threading.Thread(target=_load, name="evalcore-warmup", daemon=True).start()
    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    from evalcore.dashboard import warmup  # the module app.py imports, not this `__main__` copy of it: one `_loaded` event

    warmup.main()
