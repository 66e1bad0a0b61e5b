"""A run that could not run must not pass: models are checked before the first attempt, and errored attempts make a run incomplete."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.cli import main
from evalcore.store.behaviour import last_green_report, list_runs

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_model_without_its_key_is_refused_before_anything_runs(tmp_path):
    """The README's own example without OPENAI_API_KEY: one line per model at once, exit 2, nothing started or stored."""
    env = {key: value for key, value in os.environ.items() if key not in KEYS} | {"PYTHONPATH": str(ROOT)}
    db = tmp_path / "evals.duckdb"
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "run", "--models", "sim/lexical,openai/gpt-4o-mini,anthropic/claude-sonnet-4-5", "--server", "reference",
         "--runs", "5", "--db", str(db)],
        capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: openai/gpt-4o-mini: OPENAI_API_KEY is not set",
        "error: anthropic/claude-sonnet-4-5: ANTHROPIC_API_KEY is not set",
    ]
    assert not db.exists()  # nothing started, nothing stored


def test_unreachable_endpoints_and_unknown_model_strings_are_refused(tmp_path, capsys):
    port = _closed_port()
    code = main(["run", "--models", "hosted_vllm/llama-3.1-8b", "--api-base", f"http://127.0.0.1:{port}/v1", "--db", str(tmp_path / "e.duckdb")])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [f"error: hosted_vllm/llama-3.1-8b: cannot reach http://127.0.0.1:{port}/v1 (Connection refused)"]
    assert main(["run", "--models", "gpt4-typo-no-provider", "--db", str(tmp_path / "e.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: gpt4-typo-no-provider: litellm knows no provider") and err.count("\n") == 1
    assert not (tmp_path / "e.duckdb").exists()


def test_the_judge_is_checked_too(tmp_path, capsys, monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    assert main(["run", "--models", "sim/lexical", "--judge", "openai/gpt-4o-mini", "--db", str(tmp_path / "e.duckdb")]) == 2
    assert capsys.readouterr().err.strip() == "error: openai/gpt-4o-mini: OPENAI_API_KEY is not set"


def test_openai_with_a_local_api_base_and_no_key_is_told_what_a_local_server_takes(tmp_path, capsys, monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    port = _closed_port()
    argv = ["run", "--models", "openai/qwen2.5-0.5b-instruct", "--api-base", f"http://127.0.0.1:{port}/v1", "--db", str(tmp_path / "e.duckdb")]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: openai/qwen2.5-0.5b-instruct: OPENAI_API_KEY is not set (a local OpenAI-compatible server at --api-base takes "
        "hosted_vllm/qwen2.5-0.5b-instruct, which needs no key; or set OPENAI_API_KEY to any dummy value)"
    ]
    assert main(["run", "--models", "openai/gpt-4o-mini", "--db", str(tmp_path / "e.duckdb")]) == 2  # no --api-base: no hint
    assert capsys.readouterr().err.strip() == "error: openai/gpt-4o-mini: OPENAI_API_KEY is not set"


@pytest.fixture(scope="module")
def incomplete_run(tmp_path_factory, reference_url):
    """A run in which one case's every attempt failed at the provider (401): the report, the store, the summary."""
    folder = tmp_path_factory.mktemp("incomplete")
    script = folder / "script.yaml"
    script.write_text('cases:\n  weather-paris: {error: {status: 401, message: "invalid api key"}}\n')
    db, report = folder / "evals.duckdb", folder / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "run", "--models", f"sim/script:{script}", "--url", reference_url, "--runs", "2", "--db", str(db),
         "--out", str(report)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, stdin=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    return done, db, report


def test_a_run_with_errored_attempts_is_incomplete_and_exits_1(incomplete_run):
    done, db, report_path = incomplete_run
    assert done.returncode == 1, done.stdout + done.stderr
    gate_line = done.stdout.strip().splitlines()[-1]
    assert gate_line.startswith("run gate: INCOMPLETE: not a baseline: sim/script:") and "2 of 56 attempts errored" in gate_line
    assert "invalid api key" in gate_line and "PASS" not in done.stdout
    report = json.loads(report_path.read_text())
    assert report["passed"] is False and report["baseline"] is None
    assert list(report["incomplete"]["errored"].values()) == [2]


def test_an_incomplete_run_never_becomes_the_baseline(incomplete_run):
    _, db, report_path = incomplete_run
    (run,) = list_runs(db)
    assert run["status"] == "complete" and run["passed"] is False
    assert last_green_report(db, golden_path=json.loads(report_path.read_text())["golden"]["path"]) is None


def test_gate_fails_an_incomplete_report_and_refuses_it_as_baseline(incomplete_run, capsys):
    _, db, report_path = incomplete_run
    assert main(["gate", "--report", str(report_path), "--db", str(db)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"gate: FAIL, {report_path} is an incomplete run: sim/script:") and "2 of 56 attempts errored" in out
    green = json.loads(report_path.read_text())
    green.pop("incomplete")
    green["passed"] = True
    green_path = report_path.with_name("green.json")
    green_path.write_text(json.dumps(green))
    assert main(["gate", "--report", str(green_path), "--baseline", str(report_path)]) == 2
    err = capsys.readouterr().err
    assert "is an incomplete run and cannot be a baseline" in err and err.count("\n") == 1


def test_baseline_accept_refuses_a_run_with_errored_attempts(incomplete_run, capsys):
    _, db, _ = incomplete_run
    (run,) = list_runs(db)
    assert main(["baseline", "accept", run["run_id"], "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be a baseline: 2 of its 56 attempts errored" in err and "--resume" in err
    assert last_green_report(db) is None
