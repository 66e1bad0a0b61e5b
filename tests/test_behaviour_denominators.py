"""One denominator rule, end to end through `evalcore run` against the reference server with a scripted sim model:
an attempt whose provider gave up after its retries is errored (error rate only, real retries, cost 0 where the price is
known), a case whose every tool call returned an error fails, and pass^k / pass@k exist for every k up to the runs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from evalcore.cli import main
from evalcore.store.behaviour import load_attempts, load_metrics

GOLDEN = """\
cases:
  - id: weather-paris
    prompt: "What's the weather in Paris?"
    expect_tool: get_weather
    expect_args: {city: Paris}
    kind: hard
  - id: weather-nowhere
    prompt: "What's the weather in Atlantis?"
    expect_tool: get_weather
    expect_args: {city: Atlantis}
  - id: say-hello
    prompt: "Hi there!"
    expect_tool: null
"""

# weather-paris: attempt 2 hits a rate limit that never clears (the sim answers 429 to every retry).
# weather-nowhere: the right tool with the right argument, and the server answers every call with an error.
SCRIPT = """\
defaults: {latency_ms: 0, tokens: {input: 100, output: 20}}
cases:
  weather-paris:
    calls: [{name: get_weather, args: {city: Paris}}]
    text: "Cloudy in Paris."
    attempts:
      2: {error: 429}
  weather-nowhere:
    calls: [{name: get_weather, args: {city: Atlantis}}, {name: get_weather, args: {city: Atlantis}}]
    text: "It is sunny in Atlantis."
  say-hello:
    no_call: true
    text: "Hello!"
"""


def test_errored_attempts_are_in_the_error_rate_only_and_cost_what_was_billed(tmp_path: Path, reference_url: str) -> None:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    (tmp_path / "script.yaml").write_text(SCRIPT)
    db = tmp_path / "evals.duckdb"
    argv = ["run", "--golden", str(tmp_path / "tasks.yaml"), "--models", f"sim/script:{tmp_path / 'script.yaml'}", "--url", reference_url]
    main([*argv, "--db", str(db), "--out", str(tmp_path / "report.json")])
    report = json.loads((tmp_path / "report.json").read_text())
    (model,) = report["models"]
    rows = load_attempts(db, report["runId"])
    errored = [r for r in rows if r["stop_reason"] == "model_error"]
    assert [(r["case_id"], r["attempt"]) for r in errored] == [("weather-paris", 2)]
    (failed,) = errored
    assert "gave up after 3 retries" in failed["error"] and failed["retries"] == 3  # the real count, not 0
    assert failed["cost_usd"] == 0.0  # the price is known (sim: free) and nothing was billed: 0, not unknown
    assert failed["scores"] == () and failed["selection_correct"] is None  # no quality score at all

    m = model["metrics"]
    assert m["error_rate"] == 1 / 15 and m["errored"] == 1 and m["scored"] == 14
    assert m["cost_usd"] == 0.0 and report["unpricedModels"] == []
    assert m["retries"] == 3
    # every quality metric leaves the errored attempt out, the same way
    assert m["selection_accuracy"] == 1.0  # 14 of 14 scored attempts chose right (the errored one is not a wrong choice)
    assert m["argument_accuracy"] == 1.0
    assert m["over_call_rate"] == 0.0
    assert m["execution_accuracy"] == 4 / 9  # weather-paris 4 scored attempts worked; weather-nowhere's 5 never did
    assert m["pass_rate"] == 9 / 14  # 4 weather-paris + 5 say-hello, over 14 scored

    cases = {c["id"]: c for c in model["cases"]}
    paris, nowhere = cases["weather-paris"], cases["weather-nowhere"]
    assert (paris["passes"], paris["runs"], paris["attempts"], paris["errored"]) == (4, 4, 5, 1)
    assert paris["passHatK"] == {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0, "5": None}  # k > the 4 scored attempts: no estimate
    assert (nowhere["passes"], nowhere["gate_passed"]) == (0, False)  # every call errored: it must not pass
    assert any("every tool call returned an error" in entry["reason"] for entry in nowhere["failing_reasons"])
    assert cases["say-hello"]["passAtK"] == dict.fromkeys(("1", "2", "3", "4", "5"), 1.0)
    assert set(m) >= {f"pass_hat_k@{k}" for k in range(1, 6)} | {f"pass_at_k@{k}" for k in range(1, 6)}

    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(report)
    stored = {(s.scope, s.model, s.case_id): s.values for s in load_metrics(db, report["runId"])}
    assert stored[("model", model["model"], "")] == m  # the report is the stored numbers
