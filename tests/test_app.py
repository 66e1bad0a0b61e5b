"""The dashboard's conformance view, driven with Streamlit's AppTest against a real store."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from evalcore.store.conformance import record_conformance_run
from tests.test_store import _report

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_empty_store_explains_how_to_get_data(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_DB", str(tmp_path / "none.duckdb"))
    app = AppTest.from_file(APP).run(timeout=30)
    assert not app.exception
    assert "python -m evalcore conformance --reference" in app.info[0].value


def test_recorded_runs_and_their_checks_are_shown(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    record_conformance_run(db, _report(target="http://a/mcp", passed_check=False))
    monkeypatch.setenv("EVALCORE_DB", str(db))
    app = AppTest.from_file(APP).run(timeout=30)
    assert not app.exception
    runs, checks = app.dataframe
    assert list(runs.value["target"]) == ["http://a/mcp"]
    assert set(checks.value["verdict"]) == {"pass", "fail"}
    assert "NOT conformant" in app.selectbox[0].value
