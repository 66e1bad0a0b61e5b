"""`evalcore perturb`: each registered catalog perturbation's output; `sim/lexical` changing its picks under them by its
own matching; a sweep end to end against the real reference server (HTTP and stdio) with sim models: sensitivity found
on a fragile description and on a look-alike distractor, a null perturbation not flagged beyond alpha, the exit codes,
the store and the CSV/Parquet exports."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import shlex
import sys
from pathlib import Path

import duckdb
import jsonschema
import pytest

from evalcore.cli import main
from evalcore.compare.arms import server_tools
from evalcore.compare.paraphrase import paraphrase_descriptions
from evalcore.compare.perturbations import CatalogInput, get, registered
from evalcore.compare.perturbations.distractors import bundled_catalog
from evalcore.compare.perturbations.short_descriptions import SHORT_WORDS
from evalcore.compare.render import render_sensitivity
from evalcore.compare.sensitivity import PerturbationArm, PerturbReport, judge_sensitivity, selection_metric
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from evalcore.models.sim.lexical import choose_tool
from evalcore.models.tool_format import to_openai_tools
from evalcore.models.types import ModelSpec
from evalcore.records import MetricSet
from evalcore.store.behaviour import list_runs, load_attempts
from evalcore.store.comparisons import comparisons_export, list_comparisons
from evalcore.store.perturbations import list_perturbations, perturbations_export

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "perturb.schema.json").read_text(encoding="utf-8"))
COMPARE_SCHEMA = json.loads((ROOT / "docs" / "compare.schema.json").read_text(encoding="utf-8"))
STDIO_SERVER = f"{shlex.quote(sys.executable)} -m evalcore.demo_server --stdio"


def _tool(name: str, description: str, *properties: str) -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {p: {"type": "string"} for p in properties}}}


# Tools in the reference server's words.
TOOLS = [
    _tool("get_weather", "Get the current weather (temperature, condition, humidity, wind) for a city.\n\nUseful before on-site visits.", "city"),
    _tool("list_calendar_events", "List the calendar events (meetings, calls, stand-ups) scheduled on one day.", "date"),
    _tool("create_calendar_event", "Create a calendar event (meeting or call) with a title, start and end time and attendees.", "title"),
    _tool(
        "update_ticket_status",
        "Change the status of an existing support ticket (open, pending, resolved or closed). Closing asks the user to confirm.",
        "ticket_id",
        "status",
    ),
    _tool("get_ticket", "Look up one support ticket by id: its subject, current status and priority.", "ticket_id"),
]


def _offered(perturbation: str | None, tools: list[dict] = TOOLS, seed: int = 0) -> tuple[list[dict], object]:
    rewrite = get(perturbation).apply(CatalogInput(tools, seed=seed, paraphrase=str.upper)) if perturbation else None
    return to_openai_tools(tools, rewrite)


def _functions(perturbation: str, seed: int = 0) -> list[dict]:
    return [entry["function"] for entry in _offered(perturbation, seed=seed)[0]]


def _pick(prompt: str, perturbation: str | None, tools: list[dict] = TOOLS) -> str | None:
    offered, name_map = _offered(perturbation, tools)
    chosen = choose_tool(prompt, offered)
    return name_map.to_mcp(chosen.name) if chosen else None  # type: ignore[attr-defined]


# --- the generators ---------------------------------------------------------------------------------------------------


def test_the_registry_lists_each_perturbation_once_by_id():
    assert [p.id for p in registered()] == ["distractors", "no_descriptions", "paraphrased", "renamed", "short_descriptions", "shuffled"]
    assert [p.id for p in registered() if p.needs_model] == ["paraphrased"]


def test_shuffled_changes_the_order_only_and_one_seed_gives_one_order():
    functions = _functions("shuffled")
    assert sorted(f["name"] for f in functions) == sorted(t["name"] for t in TOOLS) and [f["name"] for f in functions] != [t["name"] for t in TOOLS]
    assert {f["name"]: f["description"] for f in functions} == {t["name"]: t["description"] for t in TOOLS}
    assert _functions("shuffled") == functions and _functions("shuffled", seed=1) != functions


def test_no_descriptions_offers_names_and_schemas_only():
    functions = _functions("no_descriptions")
    assert [f["name"] for f in functions] == [t["name"] for t in TOOLS] and all("description" not in f for f in functions)
    assert functions[0]["parameters"] == TOOLS[0]["inputSchema"]


def test_short_descriptions_keep_the_first_words_of_the_first_sentence():
    functions = {f["name"]: f["description"] for f in _functions("short_descriptions")}
    assert functions["get_weather"] == "Get the current weather (temperature, condition…"
    assert functions["update_ticket_status"] == "Change the status of an existing…"
    assert all(len(d.rstrip("…").split()) <= SHORT_WORDS for d in functions.values())


def test_renamed_tools_are_offered_opaquely_and_called_under_their_real_names():
    offered, name_map = _offered("renamed")
    names = [entry["function"]["name"] for entry in offered]
    assert sorted(names) == sorted(f"tool_{i}" for i in range(1, len(TOOLS) + 1))
    assert [name_map.to_mcp(name) for name in names] == [t["name"] for t in TOOLS]  # type: ignore[attr-defined]
    assert offered[0]["function"]["description"] == TOOLS[0]["description"]


def test_distractors_are_look_alikes_from_the_bundled_catalog_listed_among_the_tools():
    rewrite = get("distractors").apply(CatalogInput(TOOLS))
    catalog = {tool["name"] for tool in bundled_catalog()}
    assert len(bundled_catalog()) >= 30 and len(rewrite.distractors) == len(TOOLS)
    names = [d["name"] for d in rewrite.distractors]
    assert set(names) <= catalog and not set(names) & {t["name"] for t in TOOLS}
    assert {"get_forecast", "delete_calendar_event"} <= set(names)  # the weather and calendar look-alikes
    offered, name_map = to_openai_tools(TOOLS, rewrite)
    assert sorted(entry["function"]["name"] for entry in offered) == sorted([t["name"] for t in TOOLS] + names)
    assert [entry["function"]["name"] for entry in offered] == list(rewrite.order)
    assert name_map.to_mcp("get_forecast") == "get_forecast"  # not a server tool: a call to it is a wrong selection


def test_paraphrased_rewords_every_description_with_the_named_model():
    functions = _functions("paraphrased")
    assert [f["description"] for f in functions] == [t["description"].upper() for t in TOOLS]
    with pytest.raises(ValueError, match="needs a model"):
        get("paraphrased").apply(CatalogInput(TOOLS))


def test_the_paraphrase_model_is_asked_once_per_description():
    reworded = asyncio.run(paraphrase_descriptions(ModelSpec("sim/lexical"), ["Get the weather for a city.", "Get the weather for a city."]))
    assert reworded == {"Get the weather for a city.": "Get the weather for a city."}  # sim/lexical answers with the last paragraph


# --- sim/lexical reacts to the catalog it sees, by its own matching --------------------------------------------------


@pytest.fixture(scope="module")
def reference_tools(reference_url):
    return asyncio.run(server_tools(Target(url=reference_url), Limits(read_timeout=30.0)))


def test_sim_lexical_changes_its_picks_under_perturbations_as_its_matching_says(reference_tools):
    ticket = "The customer confirmed the VPN fix works, please mark TCK-7001 as resolved."
    assert _pick(ticket, None, reference_tools) == "update_ticket_status"
    assert _pick(ticket, "no_descriptions", reference_tools) is None  # "resolved" was only in the description
    assert _pick(ticket, "short_descriptions", reference_tools) is None  # ... after its sixth word
    assert _pick(ticket, "shuffled", reference_tools) == "update_ticket_status"  # BM25 reads a set
    calendar = "What's on the team calendar for 2026-08-03?"
    assert _pick(calendar, None, reference_tools) == "list_calendar_events"
    assert _pick(calendar, "distractors", reference_tools) == "delete_calendar_event"  # the look-alike now ranks first
    terse = [_tool("get_weather", "Current conditions for a city.", "city"), _tool("get_invoice", "Fetch an invoice by id.", "invoice_id")]
    assert _pick("What's the weather in Paris?", None, terse) == "get_weather"
    assert _pick("What's the weather in Paris?", "renamed", terse) is None  # "weather" was only in the name


# --- the sweep's verdicts and exit, from stored case metrics ----------------------------------------------------------


def _selections(model: str, case: str, correct: int, scored: int, attempts: int = 10) -> MetricSet:
    counts = {"scored": float(scored), "errored": float(attempts - scored), "attempts": float(attempts)}
    return MetricSet("case", model, case, counts | {selection_metric(): correct / scored if scored else None})


def _sweep(baseline: list[MetricSet], perturbed: list[MetricSet], tools_of_cases: dict[str, str]) -> PerturbReport:
    models, tools = judge_sensitivity(baseline, [("shuffled", perturbed)], tools_of_cases, 0.05)
    arm = PerturbationArm("shuffled", "tools shuffled", {}, "B", "cmp-1")
    return PerturbReport("ptb-1", "golden/tasks.yaml", 0.05, 10, 0, "A", (arm,), tuple(models), tuple(tools))


def test_a_case_not_measured_in_an_arm_fails_the_sweep_and_leaves_its_rows():
    # Two cases of one tool; every perturbed attempt of "weather-lyon" errored. Pooled over every case each arm
    # scored, the model and the tool rows read 10/10 against 10/10 and the sweep passed (exit 0), while the arm's
    # comparison said the case was inconclusive.
    tools_of_cases = {"weather-paris": "get_weather", "weather-lyon": "get_weather"}
    baseline = [_selections("m", "weather-paris", 10, 10), _selections("m", "weather-lyon", 10, 10)]
    perturbed = [_selections("m", "weather-paris", 10, 10), _selections("m", "weather-lyon", 0, 0)]
    sweep = _sweep(baseline, perturbed, tools_of_cases)
    report = sweep.to_json()
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    assert [(r.get("tool"), r["baseline"]["scored"], r["perturbed"]["scored"], r["casesLeftOut"]) for r in report["models"] + report["tools"]] == [
        (None, 10, 10, 1),
        ("get_weather", 10, 10, 1),
    ]
    assert report["failed"] is True and len(sweep.failed) == 2
    assert "no difference (1 case not scored in both arms)" in render_sensitivity(sweep) and "exit 1" in render_sensitivity(sweep)
    # Measured in both arms, the same counts pass.
    assert not _sweep(baseline, [_selections("m", "weather-paris", 10, 10), _selections("m", "weather-lyon", 10, 10)], tools_of_cases).failed


def test_a_perturbed_arm_does_not_select_better_because_it_errored_on_the_hard_case():
    tools_of_cases = {"hard": "get_ticket", "easy": "get_ticket"}
    baseline = [_selections("m", "hard", 0, 10), _selections("m", "easy", 10, 10)]
    perturbed = [_selections("m", "hard", 0, 0), _selections("m", "easy", 10, 10)]
    report = _sweep(baseline, perturbed, tools_of_cases).to_json()
    for row in (*report["models"], *report["tools"]):  # over every scored case: 10/20 against 10/10, better (p = 0.011)
        assert (row["baseline"]["correct"], row["baseline"]["scored"], row["perturbed"]["correct"], row["drop"]) == (10, 10, 10, 0.0)
        assert row["verdict"] == "no_difference" and row["casesLeftOut"] == 1


# --- the sweep, end to end --------------------------------------------------------------------------------------------

GOLDEN = """\
cases:
  - id: resolve-ticket
    prompt: "The customer confirmed the VPN fix works, please mark TCK-7001 as resolved."
    expect_tool: update_ticket_status
    expect_args: {ticket_id: TCK-7001, status: resolved}
  - id: calendar-day
    prompt: "What's on the team calendar for 2026-08-03?"
    expect_tool: list_calendar_events
    expect_args: {date: 2026-08-03}
  - id: weather-paris
    prompt: "What's the weather like in Paris right now?"
    expect_tool: get_weather
    expect_args: {city: Paris}
"""


def _perturb(directory: Path, *arguments: str) -> int:
    return main(["perturb", "--db", str(directory / "evals.duckdb"), "--json", str(directory / "perturb.json"), *arguments])


def _report(directory: Path) -> dict:
    report = json.loads((directory / "perturb.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    return report


def _verdicts(report: dict, perturbation: str) -> dict[str, str]:
    return {row["tool"]: row["verdict"] for row in report["tools"] if row["perturbation"] == perturbation}


def test_a_sweep_finds_the_fragile_description_and_the_look_alike_and_not_the_shuffle(tmp_path, reference_url, capsys):
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    code = _perturb(
        tmp_path, "--golden", str(tmp_path / "tasks.yaml"), "--url", reference_url, "--runs", "6", "--perturbations", "no_descriptions,distractors,shuffled"
    )
    out = capsys.readouterr().out
    assert code == 1, out
    report = _report(tmp_path)
    assert [p["id"] for p in report["perturbations"]] == ["no_descriptions", "distractors", "shuffled"] and report["failed"] is True
    assert _verdicts(report, "no_descriptions") == {"update_ticket_status": "worse", "list_calendar_events": "no_difference", "get_weather": "no_difference"}
    assert _verdicts(report, "distractors") == {"update_ticket_status": "no_difference", "list_calendar_events": "worse", "get_weather": "no_difference"}
    assert set(_verdicts(report, "shuffled").values()) == {"no_difference"}
    fragile = next(r for r in report["tools"] if r["perturbation"] == "no_descriptions" and r["tool"] == "update_ticket_status")
    assert (fragile["baseline"]["correct"], fragile["perturbed"]["correct"], fragile["drop"]) == (6, 0, 1.0) and fragile["ci"][0] > 0
    assert fragile["pValue"] == pytest.approx(2 / 924) and fragile["qValue"] <= 0.05
    models = {r["perturbation"]: (r["drop"], r["verdict"]) for r in report["models"]}
    assert models["shuffled"] == (0.0, "no_difference") and models["no_descriptions"][0] == pytest.approx(1 / 3)
    assert "update_ticket_status" in out and "WORSE" in out and "exit 1" in out

    # A call of a distractor is the model's wrong selection, never sent and not a server error.
    distractor_run = report["perturbations"][1]["candidateRunId"]
    attempt = next(a for a in load_attempts(tmp_path / "evals.duckdb", distractor_run) if a["case_id"] == "calendar-day")
    execution = json.loads(attempt["transcript_json"])["executions"][0]
    assert execution["tool"] == "delete_calendar_event" and execution["error_type"] == "distractor" and execution["request_ids"] == [] and not attempt["passed"]
    assert "distractors" in report["perturbations"][1]["rewrite"] and report["perturbations"][1]["rewrite"]["order"]

    # Every arm is an ordinary stored run; each perturbed arm is a comparison with the baseline.
    runs = list_runs(tmp_path / "evals.duckdb")
    assert len(runs) == 4 and all(r["effective_status"] == "complete" for r in runs)
    comparisons = {c["comparison_id"]: c for c in list_comparisons(tmp_path / "evals.duckdb")}
    assert set(comparisons) == {p["comparisonId"] for p in report["perturbations"]}
    for comparison in comparisons.values():
        jsonschema.Draft202012Validator(COMPARE_SCHEMA).validate(comparison["report"])
        assert comparison["candidate_kind"] == "perturbation" and comparison["baseline_run_id"] == report["baselineRunId"]
    (stored,) = list_perturbations(tmp_path / "evals.duckdb")
    assert stored["report"] == report and stored["failed"] is True

    # Exported as CSV and Parquet: the sensitivity rows, and each arm's comparison rows.
    rows = list(csv.DictReader(io.StringIO(perturbations_export(tmp_path / "evals.duckdb", "csv").decode())))
    assert len(rows) == len(report["models"]) + len(report["tools"])
    worse = sorted((r["perturbation"], r["tool"]) for r in rows if r["verdict"] == "worse")
    assert worse == [("distractors", ""), ("distractors", "list_calendar_events"), ("no_descriptions", ""), ("no_descriptions", "update_ticket_status")]
    assert next(r for r in rows if r["tool"] == "update_ticket_status" and r["perturbation"] == "no_descriptions")["perturbed_correct"] == "0"
    parquet = tmp_path / "perturbations.parquet"
    parquet.write_bytes(perturbations_export(tmp_path / "evals.duckdb", "parquet"))
    assert duckdb.sql(f"SELECT verdict FROM '{parquet}'").fetchall() == [(r["verdict"],) for r in rows]
    comparison_rows = list(csv.DictReader(io.StringIO(comparisons_export(tmp_path / "evals.duckdb", "csv").decode())))
    assert {r["candidate_kind"] for r in comparison_rows} == {"perturbation"} and len(comparison_rows) == 3 * (3 + 1)


def test_a_sweep_over_stdio_with_nothing_worse_exits_0(tmp_path, capsys):
    (tmp_path / "tasks.yaml").write_text(GOLDEN.split("  - id: calendar-day")[0])  # one case: the arms' server processes are the cost
    code = _perturb(tmp_path, "--golden", str(tmp_path / "tasks.yaml"), "--stdio", STDIO_SERVER, "--runs", "2", "--perturbations", "shuffled")
    assert code == 0, capsys.readouterr().out
    report = _report(tmp_path)
    assert report["failed"] is False and {r["verdict"] for r in [*report["models"], *report["tools"]]} == {"no_difference"}
    assert len(list_runs(tmp_path / "evals.duckdb")) == 2


def test_a_case_every_attempt_of_which_errored_makes_the_sweep_exit_1(tmp_path, reference_url, capsys):
    # Every attempt of weather-paris fails with a provider 400, in both arms; get_weather's other case is measured.
    golden = ["cases:"]
    for city in ("Paris", "Lyon"):
        golden += [f"  - id: weather-{city.lower()}", f'    prompt: "Weather in {city}?"', "    expect_tool: get_weather", f"    expect_args: {{city: {city}}}"]
    script = """\
cases:
  weather-paris: {calls: [{name: get_weather, args: {city: Paris}}], error: 400}
  weather-lyon: {calls: [{name: get_weather, args: {city: Lyon}}]}
"""
    (tmp_path / "tasks.yaml").write_text("\n".join(golden) + "\n")
    (tmp_path / "script.yaml").write_text(script)
    arguments = ["--golden", str(tmp_path / "tasks.yaml"), "--models", f"sim/script:{tmp_path / 'script.yaml'}", "--url", reference_url]
    code = _perturb(tmp_path, *arguments, "--runs", "2", "--perturbations", "shuffled")
    out = capsys.readouterr().out
    assert code == 1, out
    report = _report(tmp_path)
    rows = [*report["models"], *report["tools"]]
    assert [(r.get("tool"), r["baseline"]["correct"], r["perturbed"]["correct"], r["verdict"], r["casesLeftOut"]) for r in rows] == [
        (None, 2, 2, "no_difference", 1),
        ("get_weather", 2, 2, "no_difference", 1),
    ]
    assert report["failed"] is True and "1 case not scored in both arms" in out and "exit 1" in out
    (comparison,) = list_comparisons(tmp_path / "evals.duckdb")
    assert comparison["failed"] is True and {c["case"]: c["verdict"] for c in comparison["report"]["cases"]}["weather-paris"] == "inconclusive"


def test_a_null_perturbation_of_a_chance_model_is_not_flagged_beyond_alpha(tmp_path, reference_url, capsys):
    # Each case calls get_weather with a fixed chance; a shuffled catalog is a fresh draw at the same chance: no true effect.
    chances = [0.5, 0.3, 0.7, 0.5, 0.6, 0.4, 0.8, 0.5, 0.2, 0.5]
    golden, script = ["cases:"], ["seed: 5", "cases:"]
    for index, chance in enumerate(chances):
        golden += [f"  - id: null-{index}", f'    prompt: "Weather check {index}"', "    expect_tool: get_weather", "    expect_args: {city: Paris}"]
        script += [f"  null-{index}:", "    calls: [{name: get_weather, args: {city: Paris}}]", f"    p_calls: {chance}"]
    (tmp_path / "golden.yaml").write_text("\n".join(golden) + "\n")
    (tmp_path / "script.yaml").write_text("\n".join(script) + "\n")
    arguments = ["--golden", str(tmp_path / "golden.yaml"), "--models", f"sim/script:{tmp_path / 'script.yaml'}", "--url", reference_url]
    code = _perturb(tmp_path, *arguments, "--runs", "8", "--perturbations", "shuffled")
    capsys.readouterr()
    report = _report(tmp_path)
    assert code == 0 and {r["verdict"] for r in [*report["models"], *report["tools"]]} == {"no_difference"}
    (comparison,) = list_comparisons(tmp_path / "evals.duckdb")
    cases = comparison["report"]["cases"]
    assert len([c for c in cases if c["pValue"] <= report["alpha"]]) <= 1  # about alpha of them even uncorrected
    assert sum(c["baseline"]["passed"] != c["candidate"]["passed"] for c in cases) > 0  # fresh draws: the counts moved


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--perturbations", "shuffle"], "--perturbations: unknown perturbation 'shuffle' (known: distractors, no_descriptions,"),
        (["--perturbations", "paraphrased"], "--perturbations paraphrased needs --paraphrase-model MODEL"),
        (["--perturbations", "shuffled", "--paraphrase-model", "sim/lexical"], "--paraphrase-model is used only by the paraphrased perturbation"),
        (["--perturbations", "shuffled,shuffled"], "--perturbations must name each perturbation once"),
        (["--alpha", "0"], "--alpha must lie strictly between 0 and 1"),
        (["--runs", "0"], "--runs must be at least 1"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, arguments, message):
    assert _perturb(tmp_path, *arguments) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert list_runs(tmp_path / "evals.duckdb") == []
