"""Golden sets: the loader's validation (every problem, with its file:line), its defaults and hash, and golden/tasks.yaml itself."""

from __future__ import annotations

import asyncio
import hashlib
import json
import textwrap
from collections.abc import Collection
from pathlib import Path

import pytest

from evalcore.demo_server.app import TOOL_NAMES
from evalcore.errors import GoldenSetError
from evalcore.golden.loader import GoldenSetProblems, load_golden_set
from evalcore.golden.model import DEFAULT_SYSTEM_PROMPT, GoldenSet
from evalcore.mcp.client import McpClient
from evalcore.mcp.transport.http import HttpTransport

REPO_GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "tasks.yaml"


def write(tmp_path: Path, text: str, name: str = "tasks.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems_of(path: Path, tool_names: Collection[str] | None = None) -> tuple[str, ...]:
    with pytest.raises(GoldenSetProblems) as info:
        load_golden_set(path, tool_names=tool_names)
    return info.value.problems


def assert_problem(problems: tuple[str, ...], where: str, *fragments: str) -> None:
    """One problem starts with `where` ("file:line") and contains every fragment."""
    matching = [p for p in problems if p.startswith(f"{where}: ") and all(fragment in p for fragment in fragments)]
    assert matching, f"no problem at {where} containing {fragments}; got:\n" + "\n".join(problems)


# Each: a broken file, the line of the problem, fragments its message must contain.
BROKEN: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "invalid yaml": (
        """\
        cases:
          - id: a
            prompt: what: now
        """,
        3,
        ("not valid YAML", "mapping values are not allowed"),
    ),
    "duplicate key": (
        """\
        cases:
          - id: a
            prompt: one
            expect_tool: null
            prompt: two
        """,
        5,
        ("not valid YAML", "duplicate key 'prompt'", "first at line 3"),
    ),
    "top level is text": ("just some text\n", 1, ("top level must be a mapping", "or a list of cases", "'just some text' (str)")),
    "no cases key": ("server: reference\n", 1, ("no 'cases:' key",)),
    "cases not a list": ("server: reference\ncases: {id: a}\n", 2, ("'cases' must be a non-empty list", "a mapping")),
    "cases empty": ("cases: []\n", 1, ("'cases' must be a non-empty list", "an empty list")),
    "unknown top-level key": (
        """\
        server: reference
        rubrik: rubric.md
        cases:
          - {id: a, prompt: p, expect_tool: null}
        """,
        2,
        ('unknown top-level key "rubrik"', 'did you mean "rubric"?', "(allowed: server, rubric, system, cases)"),
    ),
    "server not text": ("server: [a]\ncases:\n  - {id: a, prompt: p, expect_tool: null}\n", 1, ("'server' must be a name",)),
    "rubric file missing": (
        """\
        rubric: rubric.md
        cases:
          - {id: a, prompt: p, expect_tool: null}
        """,
        1,
        ('rubric file "rubric.md" not found', "relative to the golden file"),
    ),
    "case not a mapping": ("cases:\n  - {id: a, prompt: p, expect_tool: null}\n  - just a prompt\n", 3, ("case #2: must be a mapping", "'just a prompt'")),
    "unknown case key": (
        """\
        cases:
          - id: weather-basic
            prompt: Weather in Paris?
            expect_tools: get_weather
        """,
        4,
        ('case "weather-basic": unknown key "expect_tools"', 'did you mean "expect_tool"?', "allowed: id, prompt, system, expect_tool, expect_args, arg_match"),
    ),
    "missing id": ("cases:\n  - {id: a, prompt: p, expect_tool: null}\n  - prompt: no id here\n    expect_tool: null\n", 3, ("case #2: missing 'id'",)),
    "missing prompt": ("cases:\n  - id: weather-basic\n    expect_tool: get_weather\n", 2, ("case \"weather-basic\": missing 'prompt'",)),
    "id not text": ("cases:\n  - id: 42\n    prompt: p\n    expect_tool: null\n", 2, ("case #1: 'id' must be non-empty text", "42 (int)")),
    "prompt empty": ("cases:\n  - id: a\n    prompt: ''\n    expect_tool: null\n", 3, ("case \"a\": 'prompt' must be non-empty text",)),
    "expect_tool absent": (
        "cases:\n  - id: weather-basic\n    prompt: p\n",
        2,
        ("case \"weather-basic\": missing 'expect_tool'", "'expect_tool: null' for a case where no tool may be called"),
    ),
    "expect_tool not a name": (
        "cases:\n  - id: a\n    prompt: p\n    expect_tool: [get_weather]\n",
        4,
        ("case \"a\": 'expect_tool' must be a tool name, or null", "a list"),
    ),
    "expect_args not a mapping": (
        "cases:\n  - id: a\n    prompt: p\n    expect_tool: get_weather\n    expect_args: Paris\n",
        5,
        ("case \"a\": 'expect_args' must be a mapping", "'Paris' (str)"),
    ),
    "arg_match not a mapping": (
        "cases:\n  - id: a\n    prompt: p\n    expect_tool: get_weather\n    expect_args: {city: Paris}\n    arg_match: exact\n",
        6,
        ("case \"a\": 'arg_match' must be a mapping",),
    ),
    "arg_match mode unknown": (
        """\
        cases:
          - id: a
            prompt: p
            expect_tool: get_weather
            expect_args: {city: Paris}
            arg_match:
              city: fuzzy
        """,
        7,
        ('case "a": arg_match for "city" is \'fuzzy\' (str)', "use one of exact, semantic, ignore"),
    ),
    "arg_match names a missing argument": (
        """\
        cases:
          - id: a
            prompt: p
            expect_tool: get_weather
            expect_args: {city: Paris}
            arg_match:
              city: exact
              units: ignore
        """,
        8,
        ('case "a": arg_match names "units", which is not in expect_args (has: city)',),
    ),
    "expect_sequence not a list": (
        "cases:\n  - id: a\n    prompt: p\n    expect_sequence: get_customer\n",
        4,
        ("case \"a\": 'expect_sequence' must be a non-empty list of tool names", "'get_customer' (str)"),
    ),
    "expect_sequence item not a name": (
        """\
        cases:
          - id: a
            prompt: p
            expect_sequence:
              - get_customer
              - 7
        """,
        6,
        ('case "a": expect_sequence item 2 must be a tool name', "7 (int)"),
    ),
    "kind unknown": ("cases:\n  - id: a\n    prompt: p\n    expect_tool: null\n    kind: firm\n", 5, ("case \"a\": 'kind' must be hard or soft", "'firm'")),
    "rubric not text": ("cases:\n  - id: a\n    prompt: p\n    expect_tool: null\n    rubric: [x]\n", 5, ("case \"a\": 'rubric' must be text",)),
    "negative case with args": (
        "cases:\n  - id: chit-chat\n    prompt: thanks!\n    expect_tool: null\n    expect_args: {city: Paris}\n",
        5,
        ("case \"chit-chat\": a negative case ('expect_tool: null') cannot have 'expect_args'",),
    ),
    "negative case with sequence": (
        "cases:\n  - id: chit-chat\n    prompt: thanks!\n    expect_tool: null\n    expect_sequence: [get_weather]\n",
        5,
        ("case \"chit-chat\": a negative case ('expect_tool: null') cannot have 'expect_sequence'",),
    ),
    "expect_tool not first of sequence": (
        """\
        cases:
          - id: remind
            prompt: p
            expect_tool: send_email
            expect_sequence: [search_invoices, send_email]
        """,
        4,
        ('case "remind": expect_tool "send_email" is not the first tool of expect_sequence ("search_invoices")',),
    ),
    "duplicate id": (
        """\
        cases:
          - id: weather-basic
            prompt: p
            expect_tool: get_weather
          - id: weather-basic
            prompt: q
            expect_tool: get_weather
        """,
        5,
        ('case "weather-basic": duplicate id (first used at line 2)',),
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_each_problem_is_reported_with_file_line_and_object(tmp_path: Path, name: str) -> None:
    text, line, fragments = BROKEN[name]
    path = write(tmp_path, text)
    assert_problem(problems_of(path), f"{path}:{line}", *fragments)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}: golden-set file not found")


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    assert problems_of(path) == (f"{path}:1: the file is empty; expected a mapping with a 'cases:' list, or a list of cases",)


def test_unknown_tools_are_checked_against_the_server_with_a_suggestion(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        cases:
          - id: weather-basic
            prompt: Weather in Paris?
            expect_tool: get_wether
          - id: remind
            prompt: p
            expect_sequence:
              - search_invoices
              - send_emial
        """,
    )
    problems = problems_of(path, tool_names=TOOL_NAMES)
    assert_problem(
        problems, f"{path}:4", 'case "weather-basic": unknown tool "get_wether"', 'did you mean "get_weather"?', "(server has: create_calendar_event, "
    )
    assert_problem(problems, f"{path}:9", 'case "remind": unknown tool "send_emial"', 'did you mean "send_email"?')
    assert len(problems) == 2
    # Without the server's tool list, tool names are not checked.
    assert [case.id for case in load_golden_set(path).cases] == ["weather-basic", "remind"]


def test_an_unknown_tool_named_twice_in_a_case_is_reported_once(tmp_path: Path) -> None:
    path = write(tmp_path, "cases:\n  - id: a\n    prompt: p\n    expect_tool: lookup\n    expect_sequence: [lookup, send_email]\n")
    (problem,) = problems_of(path, tool_names={"send_email"})
    assert problem == f'{path}:4: case "a": unknown tool "lookup" (server has: send_email)'


def test_all_problems_are_reported_in_file_order_and_the_first_line_stands_alone(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        server: reference
        cases:
          - id: a
            prompt: p
            expect_tool: get_weather
            kind: firm
          - id: b
            prompt: q
          - id: a
            prompt: r
            expect_tool: null
        extra: 1
        """,
    )
    with pytest.raises(GoldenSetError) as info:
        load_golden_set(path)
    error = info.value
    assert isinstance(error, GoldenSetProblems)
    assert [problem.split(": ")[0] for problem in error.problems] == [f"{path}:6", f"{path}:7", f"{path}:9", f"{path}:12"]
    lines = str(error).splitlines()
    assert lines[0] == f"{error.problems[0]} (and 3 more problems below)"
    assert lines[1:] == list(error.problems[1:])


def test_a_single_problem_is_the_whole_message(tmp_path: Path) -> None:
    path = write(tmp_path, "cases:\n  - id: a\n    prompt: p\n    expect_tool: null\n    kind: firm\n")
    with pytest.raises(GoldenSetProblems) as info:
        load_golden_set(path)
    assert str(info.value) == info.value.problems[0]


def test_defaults_and_values(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        server: reference
        cases:
          - id: weather-paris
            prompt: Weather in Paris?
            expect_tool: get_weather
            expect_args: {city: Paris}
          - id: remind
            prompt: Remind Acme about overdue invoices.
            expect_sequence: [search_invoices, send_email]
            expect_args: {customer_id: CUST-1001, status: overdue, from_date: 2026-01-01}
            arg_match: {status: ignore}
            kind: hard
            rubric: Names INV-2026-0003.
          - id: chit-chat
            prompt: Thanks!
            expect_tool: null
        """,
    )
    golden = load_golden_set(path, tool_names=TOOL_NAMES)
    weather, remind, chat = golden.cases
    assert (golden.server, golden.rubric_path, golden.rubric_text) == ("reference", None, None)
    assert (weather.kind, weather.expect_sequence, weather.rubric, weather.line) == ("soft", (), None, 3)
    assert weather.match_mode("city") == "exact"
    assert not weather.is_negative
    assert remind.expect_tool == "search_invoices"  # absent expect_tool: the sequence's first tool
    assert remind.expect_sequence == ("search_invoices", "send_email")
    assert (remind.kind, remind.rubric, remind.line) == ("hard", "Names INV-2026-0003.", 7)
    assert remind.match_mode("status") == "ignore" and remind.match_mode("customer_id") == "exact"
    # YAML would make 2026-01-01 a date; the model sends the string, so the golden value stays one.
    assert remind.expect_args == {"customer_id": "CUST-1001", "status": "overdue", "from_date": "2026-01-01"}
    assert type(remind.expect_args) is dict and type(remind.arg_match) is dict
    assert chat.expect_tool is None and chat.is_negative and chat.expect_args == {}


def test_a_bare_list_of_cases_is_a_golden_set(tmp_path: Path) -> None:
    path = write(tmp_path, "- id: chit-chat\n  prompt: Thanks!\n  expect_tool: null\n- id: w\n  prompt: Paris weather\n  expect_tool: get_weather\n")
    golden = load_golden_set(path)
    assert [(case.id, case.line) for case in golden.cases] == [("chit-chat", 1), ("w", 4)]
    assert golden.server is None


def test_hash_covers_the_golden_file_and_the_rubric(tmp_path: Path) -> None:
    text = "rubric: rubric.md\ncases:\n  - {id: a, prompt: p, expect_tool: null}\n"
    path = write(tmp_path, text)
    rubric = write(tmp_path, "Pass when complete.\n", name="rubric.md")
    first = load_golden_set(path)
    assert first.rubric_path == rubric and first.rubric_text == "Pass when complete.\n"
    assert first.content_hash == hashlib.sha256(path.read_bytes() + rubric.read_bytes()).hexdigest()
    rubric.write_text("Pass only when complete and honest.\n", encoding="utf-8")
    second = load_golden_set(path)
    assert second.content_hash != first.content_hash
    path.write_text(text + "# a comment\n", encoding="utf-8")
    assert load_golden_set(path).content_hash != second.content_hash


def test_hash_without_rubric_is_the_file_hash(tmp_path: Path) -> None:
    path = write(tmp_path, "cases:\n  - {id: a, prompt: p, expect_tool: null}\n")
    assert load_golden_set(path).content_hash == hashlib.sha256(path.read_bytes()).hexdigest()


# --- golden/tasks.yaml, the set for the bundled reference server ---------------------


@pytest.fixture(scope="module")
def reference_golden() -> GoldenSet:
    return load_golden_set(REPO_GOLDEN, tool_names=TOOL_NAMES)


def test_reference_golden_set_validates_and_meets_its_counts(reference_golden: GoldenSet) -> None:
    cases = reference_golden.cases
    assert reference_golden.server == "reference"
    assert reference_golden.rubric_text is not None and '"pass"' in reference_golden.rubric_text
    assert 24 <= len(cases) <= 28
    assert sum(case.is_negative for case in cases) >= 5
    assert sum(bool(case.expect_sequence) for case in cases) >= 4
    assert any(case.kind == "hard" for case in cases) and any(case.kind == "soft" for case in cases)
    modes = {case.match_mode(argument) for case in cases for argument in case.expect_args}
    assert modes == {"exact", "semantic", "ignore"}
    assert len(cases) / 4 <= sum(case.rubric is not None for case in cases) <= len(cases) / 2
    multiturn = load_golden_set(REPO_GOLDEN.with_name("multiturn.yaml"), tool_names=TOOL_NAMES).cases
    assert {tool for case in (*cases, *multiturn) for tool in (case.expect_tool, *case.expect_sequence) if tool} == set(TOOL_NAMES)


def test_every_expected_first_call_succeeds_on_the_reference_server(reference_golden: GoldenSet, reference_url: str) -> None:
    """The ids, dates and cities in the golden set exist, so a model that calls as expected gets an answer."""

    async def call_all() -> dict[str, str]:
        # erase_customer_data asks the user to confirm, so the client must offer elicitation.
        client = McpClient(HttpTransport(reference_url), client_capabilities={"elicitation": {}})
        failures: dict[str, str] = {}
        try:
            for case in reference_golden.cases:
                if case.expect_tool is None:
                    continue
                exchange = await client.call_tool(case.expect_tool, dict(case.expect_args))
                if exchange.result is None or exchange.result.get("isError"):
                    failures[case.id] = exchange.describe()
        finally:
            await client.aclose()
        return failures

    assert asyncio.run(call_all()) == {}


# --- the system prompt belongs to the golden set ----------------------------------------


def test_the_system_prompt_comes_from_the_case_then_the_set_then_a_neutral_default(tmp_path: Path) -> None:
    bare = write(tmp_path, "cases:\n  - {id: a, prompt: p, expect_tool: null}\n", name="bare.yaml")
    assert load_golden_set(bare).cases[0].system == DEFAULT_SYSTEM_PROMPT == load_golden_set(bare).system
    assert "support" not in DEFAULT_SYSTEM_PROMPT.lower()
    path = write(
        tmp_path,
        """\
        system: You answer for the Acme help desk.
        cases:
          - {id: a, prompt: p, expect_tool: null}
          - id: b
            prompt: q
            expect_tool: null
            system: You are terse.
        """,
    )
    golden = load_golden_set(path)
    assert golden.system == "You answer for the Acme help desk."
    assert [case.system for case in golden.cases] == ["You answer for the Acme help desk.", "You are terse."]


def test_a_bad_system_prompt_is_reported_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "system: [not, text]\ncases:\n  - id: a\n    prompt: p\n    expect_tool: null\n    system: ''\n")
    problems = problems_of(path)
    assert_problem(problems, f"{path}:1", "'system' must be non-empty text, got a list")
    assert_problem(problems, f"{path}:6", "case \"a\": 'system' must be non-empty text")
    assert len(problems) == 2


def test_changing_the_system_prompt_changes_the_case_hash(tmp_path: Path) -> None:
    from evalcore.behaviour.runner import case_hash

    text = "system: {system}\ncases:\n  - {{id: a, prompt: p, expect_tool: null}}\n"
    first = load_golden_set(write(tmp_path, text.format(system="You are terse."), name="one.yaml")).cases[0]
    again = load_golden_set(write(tmp_path, text.format(system="You are terse."), name="two.yaml")).cases[0]
    other = load_golden_set(write(tmp_path, text.format(system="You are chatty."), name="three.yaml")).cases[0]
    assert case_hash(first) == case_hash(again) != case_hash(other)


def test_the_model_is_sent_the_golden_system_prompt(tmp_path: Path, reference_url: str) -> None:
    """End to end: the stored transcript starts with the case's system prompt, and the sim model bills its tokens."""
    from evalcore.cli import main
    from evalcore.store.behaviour import list_runs, load_attempts

    golden = write(
        tmp_path,
        """\
        system: You answer for the Acme help desk.
        cases:
          - {id: short, prompt: "Hi there!", expect_tool: null}
          - id: long
            prompt: "Hi there!"
            expect_tool: null
            system: You answer for the Acme help desk. Be brief, be kind, and never promise a refund you cannot give.
        """,
    )
    db = tmp_path / "evals.duckdb"
    argv = ["run", "--golden", str(golden), "--models", "sim/lexical", "--runs", "1", "--url", reference_url, "--db", str(db)]
    assert main(argv) == 0
    attempts = {row["case_id"]: row for row in load_attempts(db, list_runs(db)[0]["run_id"])}
    systems = {case_id: json.loads(row["transcript_json"])["messages"][0] for case_id, row in attempts.items()}
    assert systems["short"] == {"role": "system", "content": "You answer for the Acme help desk."}
    assert systems["long"]["content"].endswith("never promise a refund you cannot give.")
    assert attempts["long"]["input_tokens"] > attempts["short"]["input_tokens"]


def test_the_bundled_golden_sets_name_their_system_prompt() -> None:
    for name in ("tasks", "robustness", "security", "multiturn"):
        golden = load_golden_set(REPO_GOLDEN.parent / f"{name}.yaml")
        assert golden.system.startswith("You are a support-desk assistant"), name
        assert all(case.system == golden.system for case in golden.cases)
