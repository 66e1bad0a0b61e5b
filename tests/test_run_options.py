"""`run` options for slow or local models: `--max-steps` bounds the model turns of every attempt."""

from __future__ import annotations

import json
from pathlib import Path

from evalcore.cli import main
from evalcore.store.behaviour import load_attempts, load_run
from tests.builders import GOLDEN, STEADY


def test_max_steps_stops_an_attempt_at_the_step_limit_it_names(tmp_path: Path, reference_url: str) -> None:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(STEADY)
    db, out = tmp_path / "evals.duckdb", tmp_path / "report.json"
    argv = ["run", "--golden", str(tmp_path / "tasks.yaml"), "--models", f"sim/script:{tmp_path / 'script.yaml'}", "--url", reference_url]
    assert main([*argv, "--runs", "1", "--db", str(db), "--out", str(out), "--max-steps", "1"]) in (0, 1)
    run_id = json.loads(out.read_text())["runId"]
    stops = {row["case_id"]: row["stop_reason"] for row in load_attempts(db, run_id)}
    # One model turn: the first tool call is made, but no turn is left for the answer.
    assert stops == {"weather-paris": "step_limit", "customer-then-ticket": "step_limit", "say-hello": "final"}
    assert json.loads(load_run(db, run_id)["config_json"])["max_steps"] == 1
