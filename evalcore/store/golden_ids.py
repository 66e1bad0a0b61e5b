"""I/O layer (store): the migration that gives every stored golden set its stable identity (evalcore.paths.golden_identity).

Stores written before it know a golden set by how its path was typed: the
command line's `golden/tasks.yaml` and the Run page's `/home/me/repo/golden/tasks.yaml`
were two histories of one file. An absolute path becomes its identity; a
relative one was relative to the directory the run started in, which the
store never knew: it is taken as relative to the current directory when the
file is there, and is otherwise kept, in normal form (`./golden//tasks.yaml`
is `golden/tasks.yaml`).
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

import duckdb

from evalcore.paths import golden_identity


def stored_identity(stored: str) -> str:
    """The identity of a golden path as an older store holds it."""
    path = Path(stored)
    if path.is_absolute() or path.is_file():
        return golden_identity(path)
    return posixpath.normpath(stored.replace("\\", "/"))


def unify_golden_paths(connection: duckdb.DuckDBPyConnection) -> None:
    """Rewrite each run's golden path, and the path inside its stored report, to the golden set's identity."""
    rows = connection.execute("SELECT run_id, golden_path, report_json FROM behaviour_runs").fetchall()
    for run_id, stored, report_json in rows:
        identity = stored_identity(stored)
        if identity == stored:
            continue
        report = report_json
        if report_json is not None:
            parsed = json.loads(report_json)
            if isinstance(parsed.get("golden"), dict):
                parsed["golden"]["path"] = identity
            report = json.dumps(parsed)
        connection.execute("UPDATE behaviour_runs SET golden_path = ?, report_json = ? WHERE run_id = ?", [identity, report, run_id])
