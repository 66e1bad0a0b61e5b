"""The golden format's answers: per-argument one_of, optional arguments, calls with their own arguments in a sequence
or an unordered set, semantic matching that never takes a negation or an opposite, and the published JSON Schema.

Cases marked BFCL are taken from the Berkeley Function Calling Leaderboard's public data (the `bfcl-eval` package on
PyPI, version 2026.3.23, files bfcl_eval/data/possible_answer/*.json; Apache-2.0 license): its ground truth lists
the accepted values of each argument, "" meaning the argument may be left out.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evalcore.behaviour.runner import case_hash
from evalcore.golden.json_schema import schema_text
from evalcore.golden.limits import DEFAULT_LIMITS
from evalcore.golden.loader import GoldenSetProblems, load_golden_set
from evalcore.golden.model import GoldenCase
from evalcore.golden.yaml_reader import read_yaml
from evalcore.models.types import ToolCall
from evalcore.scoring.argmatch import MISSING, match_argument, normalise_text
from evalcore.scoring.attempt import score_attempt

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "docs" / "golden.schema.json"


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"call-{name}", name=name, arguments=arguments)


def load(tmp_path: Path, text: str) -> GoldenCase:
    path = tmp_path / "set.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_golden_set(path).cases[0]


def problems(tmp_path: Path, text: str, tools: list[dict[str, Any]] | None = None) -> tuple[str, ...]:
    path = tmp_path / "set.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    with pytest.raises(GoldenSetProblems) as info:
        load_golden_set(path, tools=tools)
    return info.value.problems


# --- BFCL ground truth, verbatim (bfcl_eval/data/possible_answer/), and its golden-file form ----------------------

BFCL_SIMPLE_160 = (
    '{"id": "simple_python_160", "ground_truth": [{"get_case_info": {"docket": ["2022/AL2562"], "court": ["California", "CA"], "info_type": ["victim"]}}]}'
)
BFCL_SIMPLE_60 = '{"id": "simple_python_60", "ground_truth": [{"mutation_type.find": {"snp_id": ["rs6034464"], "species": ["Homo sapiens", ""]}}]}'
BFCL_PARALLEL_15 = (
    '{"id": "parallel_15", "ground_truth": [{"calculate_capital_gains_tax": {"short_term_gain": [15000], "long_term_gain": [25000], '
    '"state": ["CA", "California"]}}, {"calculate_capital_gains_tax": {"short_term_gain": [20000], "long_term_gain": [50000], '
    '"state": ["FL", "Florida"]}}]}'
)
BFCL_PARALLEL_2 = (
    '{"id": "parallel_2", "ground_truth": [{"calculate_resistance": {"length": [5], "area": [0.01], "resistivity": ["copper", ""]}}, '
    '{"calculate_resistance": {"length": [5], "area": [0.01], "resistivity": ["aluminum"]}}]}'
)


def bfcl_case(line: str, arg_match: str = "exact") -> GoldenCase:
    """A BFCL ground truth as a golden case written with expect_set: each argument's values as one_of, "" as optional."""
    entry = json.loads(line)
    items = []
    for expected_call in entry["ground_truth"]:
        ((tool, arguments),) = expected_call.items()
        args: dict[str, Any] = {}
        for name, accepted in arguments.items():
            values = [value for value in accepted if value != ""]
            args[name] = {"one_of": values, **({"optional": True} if "" in accepted else {})}
        items.append({"tool": tool, "args": args, "arg_match": {name: arg_match for name in args}})
    key = "expect_set" if len(items) > 1 else "expect_sequence"
    document = {"cases": [{"id": entry["id"], "prompt": "from BFCL", key: items}]}
    return document_case(document)


def document_case(document: dict[str, Any]) -> GoldenCase:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bfcl.json.yaml"
        path.write_text(json.dumps(document), encoding="utf-8")  # JSON is YAML
        return load_golden_set(path).cases[0]


def test_bfcl_one_of_accepts_each_listed_value_and_nothing_else() -> None:
    case = bfcl_case(BFCL_SIMPLE_160)
    for court in ("California", "CA"):
        assert score_attempt(case, [call("get_case_info", docket="2022/AL2562", court=court, info_type="victim")]).passed
    wrong = score_attempt(case, [call("get_case_info", docket="2022/AL2562", court="Nevada", info_type="victim")])
    assert not wrong.passed
    assert wrong.reasons == ('get_case_info (line 1): court: "Nevada" is none of "California", "CA"',)


def test_bfcl_negations_never_pass_semantic_matching() -> None:
    """The three negations BFCL rejects and the semantic matcher used to accept."""
    case = bfcl_case(BFCL_SIMPLE_160, arg_match="semantic")
    assert score_attempt(case, [call("get_case_info", docket="2022/AL2562", court="California", info_type="victim")]).passed
    for court, info in (("not California", "victim"), ("California", "not victim")):
        assert not score_attempt(case, [call("get_case_info", docket="2022/AL2562", court=court, info_type=info)]).passed
    snp = bfcl_case(BFCL_SIMPLE_60, arg_match="semantic")
    assert score_attempt(snp, [call("mutation_type.find", snp_id="rs6034464")]).passed
    negated = score_attempt(snp, [call("mutation_type.find", snp_id="not rs6034464")])
    assert not negated.passed
    assert "negation" in negated.reasons[0]


def test_bfcl_optional_argument_may_be_absent_or_one_of_its_values() -> None:
    case = bfcl_case(BFCL_SIMPLE_60)
    assert score_attempt(case, [call("mutation_type.find", snp_id="rs6034464")]).passed
    assert score_attempt(case, [call("mutation_type.find", snp_id="rs6034464", species="Homo sapiens")]).passed
    assert not score_attempt(case, [call("mutation_type.find", snp_id="rs6034464", species="Mus musculus")]).passed


def test_bfcl_parallel_calls_pass_in_either_order_and_each_call_is_checked() -> None:
    case = bfcl_case(BFCL_PARALLEL_15)
    ca = call("calculate_capital_gains_tax", short_term_gain=15000, long_term_gain=25000, state="CA")
    fl = call("calculate_capital_gains_tax", short_term_gain=20000, long_term_gain=50000, state="Florida")
    assert score_attempt(case, [ca, fl]).passed
    assert score_attempt(case, [fl, ca]).passed
    wrong_second = call("calculate_capital_gains_tax", short_term_gain=20000, long_term_gain=5000, state="FL")
    score = score_attempt(case, [ca, wrong_second])
    assert not score.passed and score.args_correct is False
    assert any("long_term_gain" in reason for reason in score.reasons)
    assert not score_attempt(case, [ca]).passed  # one of two parallel calls is not the set


def test_bfcl_parallel_pairs_each_call_once_whatever_the_order() -> None:
    """The first expected call accepts both calls (its resistivity is optional); the pairing must still find one each."""
    case = bfcl_case(BFCL_PARALLEL_2)
    aluminum = call("calculate_resistance", length=5, area=0.01, resistivity="aluminum")
    bare = call("calculate_resistance", length=5, area=0.01)
    assert score_attempt(case, [aluminum, bare]).passed
    assert not score_attempt(case, [aluminum, call("calculate_resistance", length=5, area=0.02)]).passed


# --- the loader: the keys and their checks --------------------------------------------------------------------------


def test_later_calls_of_a_sequence_are_checked(tmp_path: Path) -> None:
    case = load(
        tmp_path,
        """\
        cases:
          - id: lookup-then-search
            prompt: Find CUST-1001's open invoices.
            expect_sequence:
              - {tool: get_customer, args: {customer_id: CUST-1001}}
              - {tool: search_invoices, args: {customer_id: CUST-1001, status: {one_of: [open, unpaid]}}}
        """,
    )
    good = [call("get_customer", customer_id="CUST-1001"), call("search_invoices", customer_id="CUST-1001", status="unpaid")]
    assert score_attempt(case, good).passed
    later_wrong = [call("get_customer", customer_id="CUST-1001"), call("search_invoices", customer_id="CUST-1002", status="open")]
    score = score_attempt(case, later_wrong)
    assert score.selection_correct and score.sequence_correct and score.args_correct is False
    assert score.reasons == ('search_invoices (line 6): customer_id: "CUST-1002" != "CUST-1001"',)


def test_expect_args_with_a_sequence_of_calls_is_the_first_calls(tmp_path: Path) -> None:
    case = load(
        tmp_path,
        """\
        cases:
          - id: c
            prompt: p
            expect_args: {customer_id: CUST-1001}
            expect_sequence: [get_customer, {tool: search_invoices, args: {status: open}}]
        """,
    )
    assert [c.args for c in case.expected_calls()] == [{"customer_id": "CUST-1001"}, {"status": "open"}]
    assert not score_attempt(case, [call("get_customer", customer_id="X"), call("search_invoices", status="open")]).passed


def test_a_case_of_bare_names_keeps_its_hash() -> None:
    """Cases written before calls had arguments hash as they did (drift and the cache keep their history)."""
    case = GoldenCase(
        "billing", "Find CUST-1001's invoices.", "get_customer", {"customer_id": "CUST-1001"}, expect_sequence=("get_customer", "search_invoices")
    )
    assert case_hash(case) == "45a5fff99c9315df"  # as evalcore computed it before calls had arguments
    assert case.expect_calls == () and case.expect_set == ()


BROKEN = {
    "rule typo": ("expect_args: {state: {one_of: [CA], optinal: true}}", 'unknown key "optinal" in its rule, did you mean "optional"?'),
    "empty one_of": ("expect_args: {state: {one_of: []}}", "one_of must be a non-empty list"),
    "set with expect_tool": ("expect_tool: a\n    expect_set: [a, b]", "a case with 'expect_set' cannot have 'expect_tool'"),
    "set and sequence": ("expect_sequence: [a]\n    expect_set: [a, b]", "not both"),
    "call key typo": ("expect_set: [{tool: a, arg: {x: 1}}]", 'unknown key "arg", did you mean "args"?'),
    "first args twice": ("expect_args: {x: 1}\n    expect_sequence: [{tool: a, args: {x: 2}}]", "given twice"),
}


@pytest.mark.parametrize("name", BROKEN)
def test_broken_new_keys_are_refused_at_their_line(tmp_path: Path, name: str) -> None:
    body, fragment = BROKEN[name]
    found = problems(tmp_path, f"cases:\n  - id: c\n    prompt: p\n    {body}\n")
    assert any(fragment in problem for problem in found), found


def test_review_block_is_read(tmp_path: Path) -> None:
    case = load(
        tmp_path, "cases:\n  - id: c\n    prompt: p\n    expect_tool: a\n    review: {status: draft, by: sim/drafter, at: 2026-12-05, checked: schema}\n"
    )
    assert case.is_draft and case.review is not None and case.review.at == "2026-12-05"
    assert problems(tmp_path, "cases:\n  - id: c\n    prompt: p\n    expect_tool: a\n    review: {status: drafted}\n")


# --- semantic matching: what it normalises, and never a negation or an opposite ---------------------------------------


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("California", "not California"),
        ("victim", "not victim"),
        ("rs6034464", "not rs6034464"),
        ("victim", "non-victim"),
        ("ship the order", "don't ship the order"),
        ("paid invoices", "unpaid invoices"),
        ("open tickets", "closed tickets"),
        ("sort ascending", "sort descending"),
        ("enable notifications", "disable notifications"),
        ("payment failed", "payment succeeded"),
    ],
)
def test_semantic_never_accepts_a_negation_or_an_opposite(expected: str, actual: str) -> None:
    result = match_argument(expected, actual, "semantic")
    assert not result.matched
    assert result.reason.startswith(("negation", "opposite"))


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("New York City", "new york city!"),  # case, punctuation
        ("ten apples", "10 apples"),  # number words
        ("1,000 dollars", "1000 dollars"),  # thousands separators
        ("3.0 kg", "3 kg"),  # whole decimals
        ("do not ship", "don't ship"),  # contracted not
        ("Invoice PDF download fails", "Customer cannot download the invoice PDF"),  # both negative
        ("password reset", "customer's password reset email never arrives"),  # the negation governs other words
    ],
)
def test_semantic_normalisations_that_are_applied(expected: str, actual: str) -> None:
    assert match_argument(expected, actual, "semantic").matched


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("California", "CA"),  # abbreviations: list them with one_of
        ("version 2.10", "version 2.1"),  # decimals other than .0 stay apart
        ("invoice 0002", "invoice 2"),  # leading zeros are ids
    ],
)
def test_semantic_normalisations_that_are_not_applied(expected: str, actual: str) -> None:
    assert not match_argument(expected, actual, "semantic").matched
    assert normalise_text("twenty-one") == "20 1"


def test_one_of_and_optional_rules() -> None:
    rule = {"one_of": ["NYC", "New York City"]}
    assert match_argument(rule, "NYC", "exact").matched
    assert match_argument(rule, "new york city", "semantic").matched
    assert not match_argument(rule, MISSING, "exact").matched
    assert match_argument({**rule, "optional": True}, MISSING, "exact").reason == "absent (optional)"
    assert match_argument({"optional": True}, "anything", "exact").matched
    assert match_argument({"one_of": [{"one_of": 1}]}, {"one_of": 1}, "exact").matched  # an object value holding one_of


# --- the JSON Schema ---------------------------------------------------------------------------------------------------


def test_committed_json_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), "regenerate: python -m evalcore.golden.json_schema > docs/golden.schema.json"


def test_bundled_golden_sets_conform_to_the_schema_and_a_typo_does_not() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    for path in sorted((ROOT / "golden").glob("*.yaml")):
        document = json.loads(json.dumps(read_yaml(path.read_text(encoding="utf-8"), DEFAULT_LIMITS), default=str))
        assert not list(validator.iter_errors(document)), path
    typo = {"cases": [{"id": "c", "prompt": "p", "expect_tool": "a", "expect_args": {"x": {"one_of": ["a"], "optinal": True}}}]}
    assert list(validator.iter_errors(typo))
    assert list(validator.iter_errors({"cases": [{"id": "c", "prompt": "p", "expect_tol": "a"}]}))


def test_the_drill_down_and_the_sensitivity_table_show_a_set_with_each_calls_arguments(tmp_path: Path) -> None:
    from evalcore.compare.sensitivity import case_tools
    from evalcore.dashboard.conversation import calls_side_by_side
    from evalcore.dashboard.data import expected_behaviour

    path = tmp_path / "set.yaml"
    path.write_text("cases:\n  - id: two\n    prompt: p\n    expect_set: [{tool: get_weather, args: {city: Paris}}, {tool: get_weather, args: {city: Lyon}}]\n")
    expected = expected_behaviour.__wrapped__(str(path), "two")  # type: ignore[attr-defined]
    want, _ = calls_side_by_side(expected, [])
    assert want == 'get_weather {"city": "Paris"}\nget_weather {"city": "Lyon"}\n(in any order)'
    assert case_tools(load_golden_set(path)) == {"two": "get_weather"}
