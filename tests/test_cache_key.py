"""The `--cache` key: every input that can change an attempt changes the key; an identical run reuses every attempt."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from evalcore import __version__
from evalcore.behaviour.plan import RunPlan
from evalcore.cli import main
from evalcore.errors import StoreError
from evalcore.models.tool_format import CatalogRewrite, ToolOverride
from evalcore.models.types import ModelSpec
from evalcore.store.behaviour import load_attempts, load_run
from tests.builders import GOLDEN, STEADY

MODEL = ModelSpec("openai/gpt-4o-mini", api_base=None, temperature=0.0, seed=7)
JUDGE = ModelSpec("sim/judge")
PLAN = RunPlan(
    kind="run",
    golden_path="golden/tasks.yaml",
    golden_hash="golden-1",
    cases=("case-1",),
    rubric_sha256="rubric-1",
    models=(MODEL,),
    runs=5,
    judge=JUDGE,
    max_steps=8,
    fault_timeout_s=5.0,
    run_date="2026-08-01",
    max_drop=0.02,
    max_error_rate=0.0,
    target="reference",
    server_fingerprint="fingerprint-1",
    evalcore_version="1.0.0",
)
KEY = PLAN.attempt_key(MODEL, "case-hash-1", 1)
DISTRACTOR = {"name": "lookup_weather", "description": "Weather, maybe.", "inputSchema": {"type": "object"}}

CHANGES = {
    "model": (replace(MODEL, name="openai/gpt-4o"), "case-hash-1", 1, PLAN),
    "api_base": (replace(MODEL, api_base="http://127.0.0.1:8001/v1"), "case-hash-1", 1, PLAN),
    "temperature": (replace(MODEL, temperature=0.7), "case-hash-1", 1, PLAN),
    "seed": (replace(MODEL, seed=8), "case-hash-1", 1, PLAN),
    "seed unset": (replace(MODEL, seed=None), "case-hash-1", 1, PLAN),
    "model timeout": (replace(MODEL, timeout_s=5.0), "case-hash-1", 1, PLAN),
    "retries": (replace(MODEL, max_retries=0), "case-hash-1", 1, PLAN),
    "price": (replace(MODEL, input_cost_per_token=1e-6), "case-hash-1", 1, PLAN),
    "case (prompt, system prompt, expectations)": (MODEL, "case-hash-2", 1, PLAN),
    "attempt number": (MODEL, "case-hash-1", 2, PLAN),
    "server's tools and descriptions": (MODEL, "case-hash-1", 1, replace(PLAN, server_fingerprint="fingerprint-2")),
    "catalog: a description the model sees": (MODEL, "case-hash-1", 1, replace(PLAN, catalog=CatalogRewrite({"get_weather": ToolOverride("Other.")}))),
    "catalog: a distractor tool": (MODEL, "case-hash-1", 1, replace(PLAN, catalog=CatalogRewrite(distractors=(DISTRACTOR,)))),
    "catalog: the order": (MODEL, "case-hash-1", 1, replace(PLAN, catalog=CatalogRewrite(order=("b", "a")))),
    "judge model": (MODEL, "case-hash-1", 1, replace(PLAN, judge=ModelSpec("openai/gpt-4o"))),
    "judge parameters": (MODEL, "case-hash-1", 1, replace(PLAN, judge=replace(JUDGE, temperature=0.5))),
    "no judge": (MODEL, "case-hash-1", 1, replace(PLAN, judge=None)),
    "rubric": (MODEL, "case-hash-1", 1, replace(PLAN, rubric_sha256="rubric-2")),
    "step limit": (MODEL, "case-hash-1", 1, replace(PLAN, max_steps=9)),
    "fault timeout": (MODEL, "case-hash-1", 1, replace(PLAN, fault_timeout_s=6.0)),
    "evalcore version": (MODEL, "case-hash-1", 1, replace(PLAN, evalcore_version="1.0.1")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_changing_any_input_changes_the_key(change: str) -> None:
    model, case_hash, attempt, plan = CHANGES[change]
    assert plan.attempt_key(model, case_hash, attempt) != KEY


def test_the_same_inputs_give_the_same_key_and_scheduling_does_not_count() -> None:
    assert replace(PLAN).attempt_key(replace(MODEL), "case-hash-1", 1) == KEY
    assert PLAN.attempt_key(replace(MODEL, max_concurrency=1), "case-hash-1", 1) == KEY  # how many run at once changes no attempt
    assert replace(PLAN, run_date="2026-09-01", runs=3).attempt_key(MODEL, "case-hash-1", 1) == KEY  # nor the run's date or size


def test_a_stored_plan_reads_back_to_the_same_plan_and_key() -> None:
    plan = replace(PLAN, kind="perturb-arm", catalog=CatalogRewrite({"get_weather": ToolOverride(name="weather")}, (DISTRACTOR,), ("weather",)))
    stored = json.loads(json.dumps(plan.to_json()))  # as the store gives it back
    assert RunPlan.from_json(stored) == plan
    assert RunPlan.from_json(stored).attempt_key(MODEL, "case-hash-1", 1) == plan.attempt_key(MODEL, "case-hash-1", 1)
    with pytest.raises(StoreError, match="newer than this evalcore"):
        RunPlan.from_json(stored | {"schema": 99})
    with pytest.raises(StoreError, match="cannot be read"):
        RunPlan.from_json({k: v for k, v in stored.items() if k != "golden"})


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
    plan = RunPlan.from_json(json.loads(load_run(workspace / "evals.duckdb", first_run)["plan_json"]))
    assert (plan.kind, plan.evalcore_version) == ("run", __version__)

    identical = _run(workspace, reference_url)
    assert {row["cached_from"] for row in identical} == {first_run}

    for changed in (["--max-steps", "7"], ["--judge", "sim/judge"], ["--fault-timeout", "4"]):
        rerun = _run(workspace, reference_url, *changed)
        assert all(row["cached_from"] is None for row in rerun), changed

    # The cache keeps every stored run's attempts: the first run's inputs again find its attempts.
    again = _run(workspace, reference_url)
    assert {row["cached_from"] for row in again} == {first_run}
