"""Inputs that several test modules build alike: a golden set for the reference server, a store recorded by real runs
of scripted sim models, and a conformance report. Not a test module: test modules import it, never each other."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from evalcore.behaviour.report import build_report
from evalcore.cli import main
from evalcore.conformance.runner import CheckReport, SuiteReport
from evalcore.golden.model import GoldenCase, GoldenSet
from evalcore.models.types import ModelSpec
from evalcore.records import AttemptRecord
from evalcore.scoring.gate import decide
from evalcore.store import behaviour as store
from evalcore.store.db import MIGRATIONS

# Three cases of the reference server's tools: one hard single call, one that must call nothing, one sequence.
GOLDEN = """\
cases:
  - id: weather-paris
    prompt: "What's the weather in Paris?"
    expect_tool: get_weather
    expect_args: {city: Paris}
    kind: hard
  - id: say-hello
    prompt: "Hi there!"
    expect_tool: null
  - id: customer-then-ticket
    prompt: "Look up CUST-1001 and open a ticket about their broken invoice download."
    expect_sequence: [get_customer, create_support_ticket]
    expect_args: {customer_id: CUST-1001}
"""


# steady: weather-paris 4/5 (attempt 3 asks for Lyon), say-hello 5/5, customer-then-ticket 4/5 (attempt 5 stops early)
STEADY = """\
defaults: {latency_ms: 0, tokens: {input: 100, output: 20}, model_version: steady-v1}
cases:
  weather-paris:
    calls: [{name: get_weather, args: {city: Paris}}]
    text: "Cloudy in Paris."
    attempts:
      3: {calls: [{name: get_weather, args: {city: Lyon}}]}
  say-hello:
    no_call: true
    text: "Hello! How can I help?"
  customer-then-ticket:
    calls:
      - {name: get_customer, args: {customer_id: CUST-1001}}
      - {name: create_support_ticket, args: {customer_id: CUST-1001, subject: Invoice download broken, description: The PDF download fails.}}
    text: "Opened a ticket."
    attempts:
      5: {calls: [{name: get_customer, args: {customer_id: CUST-1001}}]}
"""

# wrong: weather-paris 0/5 (always Lyon), say-hello 0/5 (calls a tool), customer-then-ticket 5/5; slower and pricier in tokens
WRONG = """\
defaults: {latency_ms: 200, tokens: {input: 300, output: 50}, model_version: wrong-v1}
cases:
  weather-paris:
    calls: [{name: get_weather, args: {city: Lyon}}]
    text: "No idea."
  say-hello:
    calls: [{name: get_weather, args: {city: Paris}}]
    text: "It is cloudy."
  customer-then-ticket:
    calls:
      - {name: get_customer, args: {customer_id: CUST-1001}}
      - {name: create_support_ticket, args: {customer_id: CUST-1001, subject: Invoice download broken, description: The PDF download fails.}}
    text: "Opened a ticket."
"""


@dataclass(frozen=True)
class Store:
    """Where `build_store` recorded its runs, and the ids and model strings a test needs to query them."""

    db: Path
    golden: Path
    steady: str  # model strings
    wrong: str
    run_id: str  # the newest run (both models)
    old_run_id: str  # an older run of `steady` only, dated 2026-01-01


def build_store(directory: Path, reference_url: str) -> Store:
    """Two runs: 2026-01-01 (steady only) and 2026-02-01 (steady and wrong), plus one Layer 0 run of the same server."""
    golden = directory / "tasks.yaml"
    golden.write_text(GOLDEN)
    (directory / "steady.yaml").write_text(STEADY)
    (directory / "wrong.yaml").write_text(WRONG)
    steady, wrong = f"sim/script:{directory / 'steady.yaml'}", f"sim/script:{directory / 'wrong.yaml'}"
    db = directory / "evals.duckdb"
    run_ids = []
    for models, day in ((steady, "2026-01-01"), (f"{steady},{wrong}", "2026-02-01")):
        out = directory / f"report-{day}.json"
        code = main(["run", "--golden", str(golden), "--models", models, "--url", reference_url, "--db", str(db), "--out", str(out), "--date", day])
        assert code in (0, 1)
        run_ids.append(json.loads(out.read_text())["runId"])
    assert main(["conformance", "--url", reference_url, "--runs", "1", "--db", str(db)]) in (0, 1)
    return Store(db, golden, steady, wrong, run_ids[1], run_ids[0])


def conformance_report(target: str = "http://127.0.0.1:1/mcp", passed_check: bool = True) -> SuiteReport:
    """A two-check Layer 0 report of `target`; `passed_check=False` makes its second check fail 3 of 5 runs."""
    checks = (
        CheckReport("discover.responds", "discover", "t", "spec", "MUST", 5, 5, "pass", "ok"),
        CheckReport("headers.method_required", "headers", "t", "spec", "MUST", 5 if passed_check else 3, 5, "pass" if passed_check else "fail", "d"),
    )
    return SuiteReport(target, "http", 5, "readonly", datetime.now(UTC), 0.5, "abc", "Demo 1", checks)


def finish_recorded_run(db: Path, run_id: str, records: Sequence[AttemptRecord], *, status: str = "complete") -> None:
    """End a run whose attempts a test wrote by hand as the runner ends one: metrics once, the gated report, one write
    (`complete`); or mark it stopped (`failed`, `cancelled`) with a reason."""
    if status != "complete":
        store.fail_run(db, run_id, status=status, error="stopped by the test")
        return
    run = store.load_run(db, run_id)
    cases = tuple(GoldenCase(case_id, "p", None, kind=kind) for case_id, kind in dict.fromkeys((r.case_id, r.case_kind) for r in records))  # type: ignore[arg-type]
    models = tuple(ModelSpec(model) for model in dict.fromkeys(r.model for r in records))
    report, metric_sets = build_report(run, GoldenSet(Path(run["golden_path"]), cases, run["golden_hash"]), records, models)
    gated = replace(report, gate=decide(report.to_json(), None, max_drop=0.02, incomplete=report.incomplete))
    store.finish_run(db, gated, metric_sets)


def matrix_frame(**columns: object):
    """The matrix's cells for models a and b and cases c1 and c2: a's c1 all errored, a's c2 3/4 with one errored,
    b's c1 5/5, b never ran c2. Keyword arguments replace columns."""
    import pandas as pd

    base: dict[str, object] = {
        "model": ["a", "a", "b"],
        "case_id": ["c1", "c2", "c1"],
        "run_id": "r",
        "passes": [0, 3, 5],
        "runs": [0, 4, 5],
        "attempts": [5, 5, 5],
        "errored": [5, 1, 0],
        "pass_rate": [None, 0.75, 1.0],
        "pass_hat_k": [None, 0.0, 1.0],
        "top_failing_reason": [None, "wrong tool", None],
        "simulated": [True, True, False],
    }
    return pd.DataFrame({**base, **columns})


def migrate_to(connection: duckdb.DuckDBPyConnection, version: int) -> None:
    """Make the empty store behind `connection` as an evalcore of schema `version` wrote it: its first `version`
    migrations, each recorded, as `evalcore.store.db` runs them."""
    connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for number, migration in enumerate(MIGRATIONS[:version], start=1):
        if callable(migration):
            migration(connection)
        else:
            connection.execute(migration)
        connection.execute("INSERT INTO schema_version VALUES (?)", [number])
