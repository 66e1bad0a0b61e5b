"""The `--cache` key: every input that can change an attempt changes the key; an identical run reuses every attempt."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from evalcore import __version__
from evalcore.behaviour.cache_key import RunInputs, attempt_cache_key, stored_attempt_key
from evalcore.cli import main
from evalcore.models.types import ModelSpec
from evalcore.store.behaviour import load_attempts, load_run
from tests.builders import GOLDEN, STEADY

MODEL = ModelSpec("openai/gpt-4o-mini", api_base=None, temperature=0.0, seed=7)
JUDGE = ModelSpec("sim/judge")
RUN = RunInputs("fingerprint-1", JUDGE, "Grade the answer.", max_steps=8, fault_timeout_s=5.0, evalcore_version="1.0.0")
KEY = attempt_cache_key(MODEL, "case-hash-1", 1, RUN)

CHANGES = {
    "model": (replace(MODEL, name="openai/gpt-4o"), "case-hash-1", 1, RUN),
    "api_base": (replace(MODEL, api_base="http://127.0.0.1:8001/v1"), "case-hash-1", 1, RUN),
    "temperature": (replace(MODEL, temperature=0.7), "case-hash-1", 1, RUN),
    "seed": (replace(MODEL, seed=8), "case-hash-1", 1, RUN),
    "seed unset": (replace(MODEL, seed=None), "case-hash-1", 1, RUN),
    "model timeout": (replace(MODEL, timeout_s=5.0), "case-hash-1", 1, RUN),
    "retries": (replace(MODEL, max_retries=0), "case-hash-1", 1, RUN),
    "price": (replace(MODEL, input_cost_per_token=1e-6), "case-hash-1", 1, RUN),
    "case (prompt, system prompt, expectations)": (MODEL, "case-hash-2", 1, RUN),
    "attempt number": (MODEL, "case-hash-1", 2, RUN),
    "server's tools and descriptions": (MODEL, "case-hash-1", 1, replace(RUN, server_fingerprint="fingerprint-2")),
    "judge model": (MODEL, "case-hash-1", 1, replace(RUN, judge=ModelSpec("openai/gpt-4o"))),
    "judge parameters": (MODEL, "case-hash-1", 1, replace(RUN, judge=replace(JUDGE, temperature=0.5))),
    "no judge": (MODEL, "case-hash-1", 1, replace(RUN, judge=None)),
    "rubric": (MODEL, "case-hash-1", 1, replace(RUN, rubric_text="Grade the answer strictly.")),
    "step limit": (MODEL, "case-hash-1", 1, replace(RUN, max_steps=9)),
    "fault timeout": (MODEL, "case-hash-1", 1, replace(RUN, fault_timeout_s=6.0)),
    "evalcore version": (MODEL, "case-hash-1", 1, replace(RUN, evalcore_version="1.0.1")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_changing_any_input_changes_the_key(change: str) -> None:
    assert attempt_cache_key(*CHANGES[change]) != KEY


def test_the_same_inputs_give_the_same_key_and_scheduling_does_not_count() -> None:
    assert attempt_cache_key(replace(MODEL), "case-hash-1", 1, replace(RUN)) == KEY
    assert attempt_cache_key(replace(MODEL, max_concurrency=1), "case-hash-1", 1, RUN) == KEY  # how many run at once changes no attempt


def test_a_stored_attempt_gets_the_same_key_from_its_run_config_and_an_old_run_gets_none() -> None:
    from dataclasses import asdict

    config = {"models": [asdict(MODEL)], "judge": asdict(JUDGE), "max_steps": 8, "cache_inputs": RUN.to_json()}
    stored = json.loads(json.dumps(config))  # as the store gives it back
    row = {"model": MODEL.name, "case_hash": "case-hash-1", "attempt": 1}
    assert stored_attempt_key(row, stored, "fingerprint-1") == KEY
    assert stored_attempt_key(row, stored, "fingerprint-2") != KEY
    before = {k: v for k, v in stored.items() if k != "cache_inputs"}  # a run stored before the key held every input
    assert stored_attempt_key(row, before, "fingerprint-1") is None
    assert stored_attempt_key({**row, "model": "openai/other"}, stored, "fingerprint-1") is None


# --- runs through the CLI, on the reference server -------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    return tmp_path


def _run(workspace: Path, reference_url: str, *extra: str) -> list[dict]:
    """Run the golden set with `--cache`; the new run's attempts."""
    argv = ["run", "--golden", str(workspace / "tasks.yaml"), "--models", f"sim/script:{workspace / 'script.yaml'}", "--url", reference_url]
    argv += ["--db", str(workspace / "evals.duckdb"), "--out", str(workspace / "report.json"), "--cache", *extra]
    assert main(argv) in (0, 1)
    return load_attempts(workspace / "evals.duckdb", json.loads((workspace / "report.json").read_text())["runId"])


def test_an_identical_run_hits_the_cache_and_a_changed_input_misses_it(workspace: Path, reference_url: str) -> None:
    first = _run(workspace, reference_url)
    assert len(first) == 15 and all(row["cached_from"] is None for row in first)
    first_run = first[0]["run_id"]
    config = json.loads(load_run(workspace / "evals.duckdb", first_run)["config_json"])
    assert config["cache_inputs"]["evalcore_version"] == __version__

    identical = _run(workspace, reference_url)
    assert {row["cached_from"] for row in identical} == {first_run}

    for changed in (["--max-steps", "7"], ["--judge", "sim/judge"], ["--fault-timeout", "4"]):
        rerun = _run(workspace, reference_url, *changed)
        assert all(row["cached_from"] is None for row in rerun), changed

    # The cache keeps every stored run's attempts: the first run's inputs again find its attempts.
    again = _run(workspace, reference_url)
    assert {row["cached_from"] for row in again} == {first_run}
