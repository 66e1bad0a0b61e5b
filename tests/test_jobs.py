"""Ad-hoc runs from the dashboard: only configured things can be launched; a launched run completes and is stored."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.behaviour import jobs
from evalcore.errors import ConfigError
from evalcore.store.behaviour import last_green_report, list_runs, load_run
from evalcore.store.db import connect
from tests.waiting import wait_for_exit, wait_for_http, wait_until

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden" / "tasks.yaml"


def test_models_with_keys_present_are_offered_and_nothing_else():
    assert jobs.offered_models({}) == ["sim/lexical"]
    assert "openai/gpt-4o-mini" in jobs.offered_models({"OPENAI_API_KEY": "sk-x"})
    assert not any(m.startswith("anthropic/") for m in jobs.offered_models({"OPENAI_API_KEY": "sk-x"}))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"server": "python -c 'import os'"}, "unknown server"),
        ({"server": None}, "give exactly one server"),
        ({"url": "http://127.0.0.1:1/mcp"}, "give exactly one server"),
        ({"server": None, "url": "ftp://127.0.0.1/mcp"}, "must start with http:// or https://"),
        ({"server": None, "stdio": "python -c 'unclosed"}, "cannot be read as a command line"),
        ({"golden": Path("/etc/passwd")}, "/etc/passwd is not a golden set: "),
        ({"golden": Path("/nonexistent/golden.yaml")}, "no such file"),
        ({"models": ["openai/gpt-4o"]}, "openai/gpt-4o: .*OPENAI_API_KEY"),  # any litellm model string; its key comes from the environment
        ({"models": []}, "choose at least one model"),
        ({"runs": 0}, "between 1 and 20"),
    ],
)
def test_launch_refuses_what_cannot_run_with_one_line_saying_why(tmp_path, kwargs, message, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    arguments = {"db": tmp_path / "evals.duckdb", "golden": GOLDEN, "server": "reference", "models": ["sim/lexical"], "runs": 1, **kwargs}
    with pytest.raises(ConfigError, match=message):
        jobs.launch(**arguments)
    assert jobs.list_jobs(tmp_path / "evals.duckdb") == []


def _wait_until_finished(job: jobs.Job) -> dict:
    """The job's status once its process has exited (the event), as the page would read it."""
    wait_for_exit(job.pid, what=f"run {job.run_id}")
    return jobs.job_status(job)


def test_run_page_launches_a_background_run_that_completes(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    monkeypatch.setenv("EVALCORE_DB", str(db))
    app = AppTest.from_file(str(ROOT / "pages" / "4_Run.py")).run(timeout=120)
    assert not app.exception
    assert app.multiselect[0].value == ["sim/lexical"]
    app.number_input[0].set_value(1)
    app.button[0].click().run(timeout=120)
    assert not app.exception
    assert "Started run" in app.success[0].value
    (job,) = jobs.list_jobs(db)
    status = _wait_until_finished(job)
    assert status["status"] == "complete", status
    assert status["done"] == status["total"] == 28
    (run,) = list_runs(db)
    assert run["run_id"] == job.run_id and run["attempts"] == 28
    # a reload finds the run again and shows it finished
    again = AppTest.from_file(str(ROOT / "pages" / "4_Run.py")).run(timeout=120)
    assert any(job.run_id in t.value and "complete" in t.value for t in again.text)
    # with its scores, as the report states them, and a link to it in the matrix
    (score,) = status["scores"]
    report = json.loads(load_run(db, job.run_id)["report_json"])
    assert score["pass_rate"] == report["models"][0]["metrics"]["pass_rate"] and score["attempts"] == 28
    assert f"sim/lexical (simulated): pass rate {score['pass_rate']:.0%} ({score['passes']}/28 attempts passed)" in [t.value for t in again.text]
    assert again.button(key=f"open-{job.run_id}").label == "Open this run in the matrix"  # the browser test follows it
    # sim/lexical misses case gates, so the run is no baseline until accepted by hand, here as on the command line
    assert any("run gate NO BASELINE" in t.value for t in again.text) and last_green_report(db) is None
    again.button(key=f"accept-{job.run_id}").click().run(timeout=120)
    assert not again.exception and f"Run {job.run_id} is now the baseline" in again.success[0].value
    assert last_green_report(db)["runId"] == job.run_id


def test_a_run_against_your_own_server_by_url_or_stdio_command_completes(tmp_path, reference_url):
    db = tmp_path / "evals.duckdb"
    by_url = jobs.launch(db=db, golden=GOLDEN, url=reference_url, models=["sim/lexical"], runs=1)
    assert _wait_until_finished(by_url)["status"] == "complete"
    command = f"{sys.executable} -m evalcore.demo_server --stdio"
    by_stdio = jobs.launch(db=db, golden=GOLDEN, stdio=command, models=["sim/lexical"], runs=1)
    assert _wait_until_finished(by_stdio)["status"] == "complete"
    assert {run["run_id"]: run["server_target"] for run in list_runs(db)} == {by_url.run_id: reference_url, by_stdio.run_id: f"stdio: {command}"}
    assert [job.server for job in jobs.list_jobs(db)] == [f"stdio: {command}", reference_url]  # newest first


def test_jobs_are_listed_newest_first_whatever_their_names(tmp_path):
    db = tmp_path / "evals.duckdb"
    folder = jobs.jobs_dir(db)
    folder.mkdir(parents=True)
    older = jobs.Job("demo-20261201T120000", 1, "2026-12-01T12:00:00+00:00", "g.yaml", "reference", ("sim/script",), 5, str(db), "", kind="demo")
    newer = jobs.Job("20261201-130000-abcdef", 2, "2026-12-01T13:00:00+00:00", "g.yaml", "reference", ("sim/lexical",), 1, str(db), "")
    for job in (older, newer):
        (folder / f"{job.run_id}.json").write_text(json.dumps(dataclasses.asdict(job)))
    assert [job.run_id for job in jobs.list_jobs(db)] == [newer.run_id, older.run_id]  # by name, the demo came first


def test_a_finished_job_is_reaped_without_anyone_asking_for_its_status(tmp_path):
    db = tmp_path / "evals.duckdb"
    job = jobs.launch(db=db, golden=GOLDEN, server="reference", models=["sim/lexical"], runs=1)
    wait_for_exit(job.pid, what=f"run {job.run_id}")  # exited: a zombie until its parent waits for it
    wait_until(lambda: not Path(f"/proc/{job.pid}").exists(), what=f"run {job.run_id} reaped (not <defunct>)")


def test_an_identical_run_cannot_start_twice(tmp_path):
    """Two clicks, two tabs: while a run is going, the same run is refused; a different one is not."""
    db = tmp_path / "evals.duckdb"
    first = jobs.launch(db=db, golden=GOLDEN, server="reference", models=["sim/lexical"], runs=20)
    other = None
    try:
        with pytest.raises(ConfigError, match=f"an identical run is already running \\({first.run_id}\\)"):
            jobs.launch(db=db, golden=GOLDEN.parent / "." / GOLDEN.name, server="reference", models=["sim/lexical"], runs=20)
        other = jobs.launch(db=db, golden=GOLDEN, server="reference", models=["sim/lexical"], runs=19)
        assert [job.run_id for job in jobs.list_jobs(db)].count(first.run_id) == 1 and len(jobs.list_jobs(db)) == 2
    finally:
        for job in (first, other):
            if job is not None:
                _stop(job)


def test_the_demo_card_counts_the_demo_runs_only(tmp_path):
    """Ad-hoc runs in the same store are not the demo's: its card never reads 27/24."""
    db = tmp_path / "evals.duckdb"
    demo_pid, started = 2**22 + 4321, datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # above Linux's largest pid: never a live process
    with connect(db) as connection:
        for index, (pid, minutes) in enumerate([(demo_pid, 1), (demo_pid, 2), (demo_pid, -60), (os.getpid(), 3), (os.getpid(), 4)]):
            connection.execute(
                "INSERT INTO behaviour_runs (run_id, started_at, status, run_date, golden_path, golden_hash, server_target, server_fingerprint, "
                "server_tools_json, models_json, runs, config_json, pid, evalcore_version) "
                "VALUES (?, ?, 'complete', ?, 'golden/tasks.yaml', 'h', 'reference', 'fp', '[]', '[]', 5, '{}', ?, '0.1.0')",
                [f"run-{index}", started + timedelta(minutes=minutes), date(2026, 12, 1), pid],
            )
    demo = jobs.Job("demo-1", demo_pid, started.isoformat(), "golden/tasks.yaml", "reference", ("sim/script",), 5, str(db), "", kind="demo", nights=21)
    status = jobs.job_status(demo)
    assert (status["done"], status["total"]) == (2, 24)  # its two runs; not the earlier one of a reused pid, nor the ad-hoc ones


def test_a_failed_run_shows_why(tmp_path):
    db = tmp_path / "evals.duckdb"
    db.parent.mkdir(exist_ok=True)
    db.write_text("this is not a duckdb file")
    job = jobs.launch(db=db, golden=GOLDEN, server="reference", models=["sim/lexical"], runs=1)
    status = _wait_until_finished(job)
    assert status["status"] == "failed"
    assert status["reason"] and "cannot open the results store" in status["reason"]


def test_cancel_stops_a_run_and_it_is_marked_cancelled(tmp_path):
    db = tmp_path / "evals.duckdb"
    job = jobs.launch(db=db, golden=GOLDEN, server="reference", models=["sim/lexical"], runs=20)
    wait_until(lambda: jobs.job_status(job)["done"] >= 5, what=f"run {job.run_id} storing 5 of its 560 attempts")  # no event: rows
    jobs.cancel(job)
    status = _wait_until_finished(job)
    assert status["status"] == "cancelled", status
    assert 5 <= status["done"] < status["total"]


def _stop(job: jobs.Job) -> None:
    jobs.cancel(job)
    wait_for_exit(job.pid, what=f"cancelled job {job.run_id}")


def test_the_empty_state_button_builds_the_demo_history_in_the_background(tmp_path, monkeypatch):
    db = tmp_path / "evals.duckdb"
    monkeypatch.setenv("EVALCORE_DB", str(db))
    app = AppTest.from_file(str(ROOT / "app.py")).run(timeout=120)
    app.button(key="launch_demo").click().run(timeout=120)
    assert not app.exception
    (job,) = jobs.list_jobs(db)
    try:
        assert job.kind == "demo" and job.nights == jobs.DEMO_NIGHTS
        assert jobs.job_status(job)["status"] == "running"
        with pytest.raises(ConfigError, match="already being built"):
            jobs.launch_demo(db)
        # a reload shows the progress, not a second button
        again = AppTest.from_file(str(ROOT / "app.py")).run(timeout=120)
        assert not again.button and again.get("progress")[0].proto.text.startswith("Building the demo history: the Layer 2 and multi-turn sets ")
        building = f"No runs yet in `{db}`: the demo history is being built (above); its first run lands within seconds."
        assert [i.value for i in again.info] == [building]  # no advice to build what is being built
        run_page = AppTest.from_file(str(ROOT / "pages" / "4_Run.py")).run(timeout=120)  # the Run page follows it too
        assert any(job.run_id in t.value and "running" in t.value for t in run_page.text)
    finally:
        _stop(job)
    assert jobs.job_status(job)["status"] == "failed"  # interrupted before its nights were stored


def test_the_demo_only_fills_an_empty_store(tmp_path):
    db = tmp_path / "evals.duckdb"
    job = jobs.launch(db=db, golden=GOLDEN, server="reference", models=["sim/lexical"], runs=1)
    assert _wait_until_finished(job)["status"] == "complete"
    with pytest.raises(ConfigError, match="already holds behaviour runs"):
        jobs.launch_demo(db)


def test_the_dashboard_command_serves_the_app_and_starts_the_demo_on_an_empty_store(tmp_path):
    import socket
    import subprocess
    import sys

    db = tmp_path / "data" / "evals.duckdb"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "evalcore", "dashboard", "--db", str(db), "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/_stcore/health", process, what="the dashboard command")
        (job,) = jobs.list_jobs(db)
        assert job.kind == "demo" and Path(job.db) == db.resolve()
        _stop(job)
    finally:
        process.terminate()
        process.wait(timeout=120)
    assert "building the simulated demo history" in (process.stdout.read() if process.stdout else "")
