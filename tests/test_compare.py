"""`evalcore compare` end to end: two arms against the real reference server (HTTP and stdio) with sim models, the
verdicts, the exit codes, the store and the JSON contract; and the statistics checked against a scripted model whose
pick probability depends on a tool description, with known true effects and null cases."""

from __future__ import annotations

import csv
import io
import json
import shlex
import sys
from pathlib import Path

import duckdb
import jsonschema
import pytest

from evalcore.behaviour.history import run_points
from evalcore.cli import main
from evalcore.store.behaviour import last_green_report, list_runs, load_attempts
from evalcore.store.comparisons import comparisons_export, list_comparisons

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "compare.schema.json").read_text(encoding="utf-8"))
STDIO_SERVER = f"{shlex.quote(sys.executable)} -m evalcore.demo_server --stdio"

# Two cases of the reference server: one sim/lexical misses under the server's own words, one it gets.
LEXICAL_GOLDEN = """\
cases:
  - id: kb-password-reset
    prompt: "A customer's password reset email never arrives. What's the procedure on our side?"
    expect_tool: search_knowledge_base
  - id: weather-paris
    prompt: "What's the weather like in Paris right now?"
    expect_tool: get_weather
    expect_args: {city: Paris}
"""
KB_OVERRIDE = """\
tools:
  search_knowledge_base:
    description: "Search help-desk articles (procedures, policies, how-to guides) by keyword: password reset emails, refunds."
"""


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "tasks.yaml").write_text(LEXICAL_GOLDEN)
    (tmp_path / "overrides.yaml").write_text(KB_OVERRIDE)
    return tmp_path


def _compare(workspace: Path, *arguments: str) -> int:
    return main(["compare", "--db", str(workspace / "evals.duckdb"), "--json", str(workspace / "compare.json"), *arguments])


def _report(workspace: Path) -> dict:
    report = json.loads((workspace / "compare.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    return report


def _verdicts(report: dict) -> dict[str, str]:
    return {case["case"]: case["verdict"] for case in report["cases"]}


def test_a_reworded_description_makes_sim_lexical_find_the_tool(workspace, reference_url, capsys):
    code = _compare(
        workspace, "--golden", str(workspace / "tasks.yaml"), "--url", reference_url, "--candidate-tools", str(workspace / "overrides.yaml"), "--runs", "6"
    )
    out = capsys.readouterr().out
    assert code == 0, out
    report = _report(workspace)
    assert _verdicts(report) == {"kb-password-reset": "better", "weather-paris": "no_difference"}
    kb = report["cases"][0]
    assert (kb["baseline"]["passed"], kb["candidate"]["passed"], kb["delta"]) == (0, 6, 1.0)
    assert kb["pValue"] == pytest.approx(2 / 924) and kb["qValue"] <= 0.05 and kb["ci"][0] > 0
    assert report["candidate"]["kind"] == "tools" and "password reset" in report["candidate"]["overrides"]["search_knowledge_base"]["description"]
    assert "kb-password-reset" in out and "BETTER" in out and "exit 0" in out
    # Both arms are ordinary stored runs, linked as one comparison.
    runs = {run["run_id"]: run for run in list_runs(workspace / "evals.duckdb")}
    assert set(runs) == {report["baselineRunId"], report["candidateRunId"]} and all(r["effective_status"] == "complete" for r in runs.values())
    # ... that stay out of the nightly history: no drift point, never the run gate's last-green baseline.
    assert run_points(workspace / "evals.duckdb") == [] and last_green_report(workspace / "evals.duckdb") is None
    (stored,) = list_comparisons(workspace / "evals.duckdb")
    assert stored["report"] == report and stored["failed"] is False and stored["candidate_kind"] == "tools"
    # The candidate's model saw the new words; its calls went to the real tool.
    attempt = next(a for a in load_attempts(workspace / "evals.duckdb", report["candidateRunId"]) if a["case_id"] == "kb-password-reset")
    assert json.loads(attempt["tool_calls_json"])[0]["name"] == "search_knowledge_base"
    assert json.loads(attempt["transcript_json"])["executions"][0]["is_error"] is False

    # The same two runs compared the other way round: the case is now worse, and the command exits 1.
    assert _compare(workspace, "--baseline-run", report["candidateRunId"], "--candidate-run", report["baselineRunId"]) == 1
    reversed_report = _report(workspace)
    assert _verdicts(reversed_report) == {"kb-password-reset": "worse", "weather-paris": "no_difference"}
    assert reversed_report["candidate"] == {"kind": "run", "source": f"stored run {report['baselineRunId']}"} and reversed_report["failed"] is True
    assert len(list_comparisons(workspace / "evals.duckdb")) == 2
    # Exported as CSV and Parquet: one row per comparison x case, then per model, from the stored reports.
    csv_rows = list(csv.DictReader(io.StringIO(comparisons_export(workspace / "evals.duckdb", "csv").decode())))
    assert [(r["case_id"], r["verdict"]) for r in csv_rows] == [
        ("kb-password-reset", "better"),
        ("weather-paris", "no_difference"),
        ("", "better"),  # the model, its two cases pooled: 6/12 against 12/12
        ("kb-password-reset", "worse"),
        ("weather-paris", "no_difference"),
        ("", "worse"),
    ]
    assert csv_rows[0]["baseline_passed"] == "0" and csv_rows[0]["candidate_passed"] == "6" and float(csv_rows[0]["p_value"]) == pytest.approx(2 / 924)
    parquet = workspace / "comparisons.parquet"
    parquet.write_bytes(comparisons_export(workspace / "evals.duckdb", "parquet"))
    assert duckdb.sql(f"SELECT verdict FROM '{parquet}'").fetchall() == [(r["verdict"],) for r in csv_rows]


def test_a_renamed_tool_is_offered_under_its_new_name_and_called_under_its_real_one(workspace, reference_url, capsys):
    (workspace / "overrides.yaml").write_text(KB_OVERRIDE + "    name: find_help_article\n")
    code = _compare(
        workspace, "--golden", str(workspace / "tasks.yaml"), "--url", reference_url, "--candidate-tools", str(workspace / "overrides.yaml"), "--runs", "2"
    )
    assert code == 0, capsys.readouterr().out
    report = _report(workspace)
    assert report["cases"][0]["candidate"]["passed"] == 2  # scored as a call of search_knowledge_base
    attempt = next(a for a in load_attempts(workspace / "evals.duckdb", report["candidateRunId"]) if a["case_id"] == "kb-password-reset")
    transcript = json.loads(attempt["transcript_json"])
    offered_call = next(m for m in transcript["messages"] if m.get("role") == "assistant" and m.get("tool_calls"))
    assert offered_call["tool_calls"][0]["function"]["name"] == "find_help_article"
    assert json.loads(attempt["tool_calls_json"])[0]["name"] == "search_knowledge_base" and transcript["executions"][0]["is_error"] is False


def test_two_stdio_servers_of_the_same_code_show_no_difference(workspace, capsys):
    code = _compare(workspace, "--golden", str(workspace / "tasks.yaml"), "--stdio", STDIO_SERVER, "--candidate-stdio", STDIO_SERVER, "--runs", "2")
    out = capsys.readouterr().out
    assert code == 0, out
    report = _report(workspace)
    assert report["candidate"] == {"kind": "stdio", "source": STDIO_SERVER}
    assert set(_verdicts(report).values()) == {"no_difference"} and report["failed"] is False


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "give exactly one of --candidate-url, --candidate-stdio or --candidate-tools (got none)"),
        (["--candidate-url", "http://127.0.0.1:9/mcp", "--candidate-stdio", "x"], "give exactly one of"),
        (["--candidate-tools", "missing.yaml"], "missing.yaml: cannot read the tool-overrides file"),
        (["--candidate-url", "http://127.0.0.1:9/mcp", "--alpha", "1.5"], "--alpha must lie strictly between 0 and 1"),
        (["--baseline-run", "A"], "needs both --baseline-run and --candidate-run"),
        (["--baseline-run", "A", "--candidate-run", "B", "--golden", "x.yaml"], "--golden runs a new comparison"),
        (["--baseline-run", "A", "--candidate-run", "A"], "compare two different runs"),
    ],
)
def test_usage_errors_exit_2_with_one_line(workspace, capsys, arguments, message):
    assert _compare(workspace, *arguments) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert list_runs(workspace / "evals.duckdb") == []


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ("tools:\n  get_wether: {description: Weather.}\n", "tool 'get_wether' is not a tool of the server (it lists: get_weather,"),
        ("tools:\n  get_weather: {name: get_invoice}\n", "the new name 'get_invoice' is also the name the model sees for get_invoice"),
        ("tools:\n  get_weather: {name: 'has space'}\n", "overrides.yaml:2: tool 'get_weather': name 'has space' must be 1-64 letters"),
        ("tools:\n  get_weather: {descripton: Weather.}\n", "overrides.yaml:2: tool 'get_weather': expected description and/or name"),
        ("tools:\n  get_weather:\n\tdescription: x\n", "overrides.yaml:3: a tab in the indentation"),
        ("tool: {}\n", "overrides.yaml:1: expected one key, tools"),
    ],
)
def test_a_bad_override_is_refused_before_any_run_with_the_tool_or_line(workspace, reference_url, capsys, overrides, message):
    (workspace / "overrides.yaml").write_text(overrides)
    code = _compare(workspace, "--golden", str(workspace / "tasks.yaml"), "--url", reference_url, "--candidate-tools", str(workspace / "overrides.yaml"))
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert list_runs(workspace / "evals.duckdb") == []  # no arm started


def test_an_unknown_stored_run_is_a_usage_error(workspace, capsys):
    assert _compare(workspace, "--baseline-run", "A", "--candidate-run", "B") == 2
    assert "no behaviour run 'A'" in capsys.readouterr().err


# --- the statistics, checked with known effects ------------------------------------------------------------------
# Every case calls get_weather (Paris), so an attempt passes exactly when the scripted model makes its call. Its chance
# of calling is p_calls, unless get_weather's description (as the model sees it) contains "forecast and conditions".
# The candidate rewrites that description: the effect cases move by a known amount, the null cases do not move at all
# (their draws are fresh: the catalog differs).
RUNS = 16
EFFECTS = {"up-1": (0.2, 0.95), "up-2": (0.15, 0.9), "up-3": (0.25, 1.0), "down-1": (0.95, 0.2), "down-2": (0.9, 0.1)}
NULLS = {f"null-{i:02d}": p for i, p in enumerate([0.5, 0.3, 0.7, 0.5, 0.6, 0.4, 0.8, 0.5, 0.2, 0.5, 0.9, 0.5, 0.35, 0.65, 0.5, 0.45, 0.55, 0.5, 0.75, 0.25])}
PHRASE = "forecast and conditions"


def _statistics_inputs(directory: Path) -> tuple[Path, Path, Path]:
    golden = ["cases:"]
    script = ["seed: 11", "cases:"]
    for case, baseline_p in [*((c, p[0]) for c, p in EFFECTS.items()), *NULLS.items()]:
        golden += [f"  - id: {case}", f'    prompt: "Weather check {case}"', "    expect_tool: get_weather", "    expect_args: {city: Paris}", "    kind: soft"]
        script += [f"  {case}:", "    calls: [{name: get_weather, args: {city: Paris}}]", '    text: "Cloudy."', f"    p_calls: {baseline_p}"]
        if case == "null-00":  # its third attempt fails like a provider error in both arms: errored, shown, not scored
            script.append("    attempts: {3: {error: 400}}")
        if case in EFFECTS:
            script.append(f'    p_calls_if: [{{tool: get_weather, contains: "{PHRASE}", p: {EFFECTS[case][1]}}}]')
    paths = directory / "stats-golden.yaml", directory / "stats-script.yaml", directory / "stats-overrides.yaml"
    paths[0].write_text("\n".join(golden) + "\n")
    paths[1].write_text("\n".join(script) + "\n")
    paths[2].write_text(f'tools:\n  get_weather:\n    description: "The current weather {PHRASE} for a city."\n')
    return paths


def test_compare_finds_the_true_effects_in_their_direction_and_flags_no_null_case_beyond_alpha(tmp_path, reference_url, capsys):
    golden, script, overrides = _statistics_inputs(tmp_path)
    arguments = ["--golden", str(golden), "--models", f"sim/script:{script}", "--url", reference_url, "--candidate-tools", str(overrides)]
    code = _compare(tmp_path, *arguments, "--runs", str(RUNS))
    capsys.readouterr()
    report = _report(tmp_path)
    verdicts = _verdicts(report)
    assert {case: verdicts[case] for case in EFFECTS} == {case: "better" if after > before else "worse" for case, (before, after) in EFFECTS.items()}
    assert code == 1  # some case is significantly worse: a CI gate fails
    nulls = [case for case in report["cases"] if case["case"] in NULLS]
    flagged = [case["case"] for case in nulls if case["verdict"] != "no_difference"]
    raw_flags = [case["case"] for case in nulls if case["pValue"] <= report["alpha"]]
    assert len(flagged) <= report["alpha"] * len(nulls), flagged
    assert len(raw_flags) <= 2, raw_flags  # even uncorrected, about alpha of them: Fisher's test holds its level
    errored = {case["case"]: (case["baseline"]["errored"], case["candidate"]["errored"], case["candidate"]["scored"]) for case in report["cases"]}
    assert errored.pop("null-00") == (1, 1, RUNS - 1) and set(errored.values()) == {(0, 0, RUNS)}
    assert all(case["runsNeeded"] is None or case["runsNeeded"] >= 1 for case in nulls)
