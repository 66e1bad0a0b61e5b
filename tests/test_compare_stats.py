"""The statistics of `evalcore compare`, against published values and brute force: Fisher's exact test, Newcombe's
interval, runs needed for 80% power, and the verdicts built from them."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import jsonschema
import pytest

from evalcore.compare.render import render_comparison
from evalcore.compare.verdicts import ArmCounts, Pool, compare_runs, judge_differences, judge_pools, pool_cases
from evalcore.models.tool_format import CatalogRewrite, ToolOverride, to_openai_tools
from evalcore.records import MetricSet
from evalcore.scoring.stats import benjamini_hochberg, fisher_exact_two_sided, newcombe_interval, runs_needed

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "docs" / "compare.schema.json").read_text(encoding="utf-8"))


def brute_force_fisher(c1: int, n1: int, c2: int, n2: int) -> float:
    """Every way to place the c1 + c2 passes over the n1 + n2 attempts, equally likely under no difference."""
    attempts, passes = n1 + n2, c1 + c2
    tables: dict[int, int] = {}
    for placed in itertools.combinations(range(attempts), passes):
        in_second = sum(1 for index in placed if index >= n1)
        tables[in_second] = tables.get(in_second, 0) + 1
    observed = tables[c2]
    return float(Fraction(sum(count for count in tables.values() if count <= observed), math.comb(attempts, passes)))


def test_fisher_matches_published_values_and_brute_force():
    assert fisher_exact_two_sided(3, 4, 1, 4) == pytest.approx(0.4857142857)  # Fisher's lady tasting tea
    assert fisher_exact_two_sided(0, 5, 5, 5) == pytest.approx(2 / 252)
    assert fisher_exact_two_sided(4, 10, 4, 10) == 1.0
    for c1, n1, c2, n2 in [(1, 6, 5, 6), (0, 4, 3, 7), (2, 8, 2, 3), (5, 9, 1, 5), (0, 3, 0, 5)]:
        assert fisher_exact_two_sided(c1, n1, c2, n2) == pytest.approx(brute_force_fisher(c1, n1, c2, n2), rel=1e-12)
        assert fisher_exact_two_sided(c1, n1, c2, n2) == fisher_exact_two_sided(c2, n2, c1, n1)  # two-sided: symmetric
    assert fisher_exact_two_sided(0, 0, 3, 5) == 1.0  # no evidence in one arm


def test_newcombe_matches_newcombe_1998_table_ii():
    """Method 10 of Newcombe 1998, examples (a), (b) and (h); the function gives p2 - p1."""
    low, high = newcombe_interval(48, 80, 56, 70)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    low, high = newcombe_interval(3, 10, 9, 10)
    assert (round(low, 4), round(high, 4)) == (0.1705, 0.8090)
    low, high = newcombe_interval(0, 20, 0, 10)
    assert (round(low, 4), round(high, 4)) == (-0.1611, 0.2775)
    assert newcombe_interval(0, 0, 1, 2) is None


def exact_power(p1: float, p2: float, n: int, alpha: float) -> float:
    """P(Fisher's p <= alpha) when n attempts per arm pass at p1 and p2: every outcome enumerated."""

    def binomial(k: int, p: float) -> float:
        return math.comb(n, k) * p**k * (1 - p) ** (n - k)

    return sum(binomial(a, p1) * binomial(b, p2) for a in range(n + 1) for b in range(n + 1) if fisher_exact_two_sided(a, n, b, n) <= alpha)


@pytest.mark.parametrize(("p1", "p2"), [(0.2, 0.8), (0.5, 1.0), (0.3, 0.7), (0.9, 0.4)])
def test_runs_needed_gives_about_80_percent_power_and_fewer_runs_do_not(p1, p2):
    needed = runs_needed(p1, p2, 0.05)
    assert needed is not None
    assert exact_power(p1, p2, needed, 0.05) >= 0.75  # an approximation: close to 80%, not below by much
    assert exact_power(p1, p2, max(1, needed // 2), 0.05) < 0.8
    assert runs_needed(p1, p2, 0.01) > needed  # a stricter level needs more runs


def test_runs_needed_of_no_difference_is_none():
    assert runs_needed(0.4, 0.4, 0.05) is None
    with pytest.raises(ValueError):
        runs_needed(0.4, 1.2, 0.05)


def test_benjamini_hochberg_of_a_textbook_example():
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.20]) == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.20])  # step-up: 0.03's 0.06 falls to 0.053


def test_verdicts_take_the_corrected_level_the_direction_and_the_errored_attempts():
    pairs = [
        ("m", "gets-better", ArmCounts(0, 10, 0, 10), ArmCounts(10, 10, 0, 10)),
        ("m", "gets-worse", ArmCounts(10, 10, 0, 10), ArmCounts(1, 9, 1, 10)),
        ("m", "same", ArmCounts(5, 10, 0, 10), ArmCounts(6, 10, 0, 10)),
        ("m", "all-errored", ArmCounts(5, 10, 0, 10), ArmCounts(0, 0, 10, 10)),
    ]
    better, worse, same, errored = judge_differences(pairs, 0.05)
    assert (better.verdict, worse.verdict, same.verdict, errored.verdict) == ("better", "worse", "no_difference", "inconclusive")
    assert worse.delta == pytest.approx(1 / 9 - 1) and worse.candidate.errored == 1  # the errored attempt is out of the rate
    assert better.q_value == pytest.approx(better.p_value * 3)  # BH over the three testable rows (m = 3, not 4), rank 1
    assert same.runs_needed == runs_needed(0.5, 0.6, 0.05 / 3) and better.runs_needed is None  # at the level BH asks of one among 3
    assert errored.p_value is None and errored.delta is None and errored.runs_needed is None
    one_row = judge_differences([("m", "gets-better", ArmCounts(2, 6, 0, 6), ArmCounts(6, 6, 0, 6))], 0.05)[0]
    assert one_row.p_value == one_row.q_value and one_row.verdict == "no_difference"  # 2/6 vs 6/6: p = 0.06


def test_a_comparison_reads_stored_metric_sets_and_serialises_to_its_schema():
    def sets(passes: dict[str, int], errored: int = 0) -> list[MetricSet]:
        cases = [MetricSet("case", "m", case, {"passes": p, "scored": 10.0 - errored, "errored": errored, "attempts": 10.0}) for case, p in passes.items()]
        total = sum(passes.values())
        scored = (10.0 - errored) * len(passes)
        model = MetricSet("model", "m", "", {"passes": total, "scored": scored, "errored": errored * len(passes), "attempts": 10.0 * len(passes)})
        return [*cases, model, MetricSet("run", "", "", {"passes": total})]

    comparison = compare_runs(
        sets({"a": 0, "b": 9}),
        sets({"a": 9, "b": 1}, errored=1),
        comparison_id="cmp-1",
        golden_path="golden/tasks.yaml",
        candidate_source={"kind": "tools", "source": "o.yaml", "overrides": {"get_weather": {"description": "x"}}},
        alpha=0.05,
        runs=10,
        baseline_run_id="A",
        candidate_run_id="B",
    )
    report = comparison.to_json()
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    assert [(c["case"], c["verdict"]) for c in report["cases"]] == [("a", "better"), ("b", "worse")]
    assert report["cases"][1]["candidate"] == {"passed": 1, "scored": 9, "errored": 1, "attempts": 10}
    assert report["cases"][0]["delta"] == pytest.approx(1.0)  # 9 of 9 scored: the errored attempt is not a failure
    assert report["failed"] is True and [d.case for d in comparison.failed] == ["b"]
    (model,) = report["models"]
    assert (model["baseline"]["passed"], model["candidate"]["passed"], model["runsNeeded"]) == (9, 10, None)


def test_overrides_show_the_model_new_words_and_map_its_calls_back():
    tools = [
        {"name": "get_weather", "description": "Weather.", "inputSchema": {"type": "object"}},
        {"name": "get_invoice", "description": "Invoice.", "inputSchema": {"type": "object"}},
    ]
    offered, names = to_openai_tools(tools, CatalogRewrite({"get_weather": ToolOverride(description="Current conditions.", name="weather_now")}))
    assert [(t["function"]["name"], t["function"]["description"]) for t in offered] == [("weather_now", "Current conditions."), ("get_invoice", "Invoice.")]
    assert names.to_mcp("weather_now") == "get_weather" and names.to_mcp("get_invoice") == "get_invoice"
    assert names.to_mcp("get_weather") != "get_weather"  # the old name was not offered: calling it reaches no real tool
    with pytest.raises(ValueError, match="also the name the model sees for get_invoice"):
        to_openai_tools(tools, CatalogRewrite({"get_weather": ToolOverride(name="get_invoice")}))
    assert to_openai_tools(tools)[0] == to_openai_tools(tools, CatalogRewrite())[0]  # no override, no change


def _case(model: str, case: str, passes: int, scored: int, attempts: int = 10) -> MetricSet:
    return MetricSet("case", model, case, {"passes": float(passes), "scored": float(scored), "errored": float(attempts - scored), "attempts": float(attempts)})


def _model(model: str, *cases: MetricSet) -> MetricSet:
    """The model's stored counts: the sums over all its cases, as the runner stores them."""
    return MetricSet("model", model, "", {name: sum(case.get(name) or 0.0 for case in cases) for name in ("passes", "scored", "errored", "attempts")})


def _compare(baseline: list[MetricSet], candidate: list[MetricSet]):
    return compare_runs(
        baseline,
        candidate,
        comparison_id="cmp-1",
        golden_path="golden/tasks.yaml",
        candidate_source={"kind": "run", "source": "stored run B"},
        alpha=0.05,
        runs=10,
        baseline_run_id="A",
        candidate_run_id="B",
    )


def test_a_model_does_not_read_better_because_the_candidate_errored_on_the_case_the_baseline_fails():
    # m: the baseline fails "hard" 0/10 and passes "easy" 10/10; every candidate attempt of "hard" errored.
    base_cases = [_case("m", "hard", 0, 10), _case("m", "easy", 10, 10)]
    cand_cases = [_case("m", "hard", 0, 0), _case("m", "easy", 10, 10)]
    # n: the same, and the candidate truly better on "mid" (0/10 -> 10/10): still not better, "hard" is unknown.
    base_n = [_case("n", "hard", 0, 10), _case("n", "mid", 0, 10)]
    cand_n = [_case("n", "hard", 0, 0), _case("n", "mid", 10, 10)]
    baseline = [*base_cases, _model("m", *base_cases), *base_n, _model("n", *base_n)]
    comparison = _compare(baseline, [*cand_cases, _model("m", *cand_cases), *cand_n, _model("n", *cand_n)])
    report = comparison.to_json()
    jsonschema.Draft202012Validator(SCHEMA).validate(report)
    m, n = report["models"]
    # Pooled over every case each arm scored, m would read 10/20 against 10/10: better (p = 0.011). Over the cases
    # scored in both arms it is 10/10 against 10/10.
    assert (m["baseline"]["passed"], m["baseline"]["scored"], m["candidate"]["passed"], m["candidate"]["scored"]) == (10, 10, 10, 10)
    assert m["verdict"] == "no_difference" and m["casesLeftOut"] == 1 and m["candidate"]["errored"] == 0
    assert n["delta"] == 1.0 and n["qValue"] <= 0.05 and n["verdict"] == "inconclusive" and n["casesLeftOut"] == 1
    assert {c["case"]: c["verdict"] for c in report["cases"] if c["model"] == "m"} == {"hard": "inconclusive", "easy": "no_difference"}
    assert report["failed"] is True and {(d.model, d.case) for d in comparison.failed} == {("m", "hard"), ("m", None), ("n", "hard"), ("n", None)}
    text = render_comparison(comparison)
    assert "no difference (1 case not scored in both arms)" in text and "INCONCLUSIVE (1 case not scored in both arms)" in text and "exit 1" in text


def test_pools_take_the_cases_scored_in_both_arms_and_count_the_others():
    pools = pool_cases(
        [
            ("m", ArmCounts(3, 5, 0, 5), ArmCounts(4, 4, 1, 5)),
            ("m", ArmCounts(0, 0, 5, 5), ArmCounts(5, 5, 0, 5)),  # the baseline scored nothing
            ("m", ArmCounts(2, 5, 0, 5), ArmCounts()),  # absent from the candidate
            ("n", ArmCounts(1, 2, 0, 2), ArmCounts(2, 2, 0, 2)),
        ]
    )
    assert pools == {"m": Pool(ArmCounts(3, 5, 0, 5), ArmCounts(4, 4, 1, 5), 2), "n": Pool(ArmCounts(1, 2, 0, 2), ArmCounts(2, 2, 0, 2), 0)}
    (nothing,) = judge_pools([("m", None, Pool(cases_left_out=3))], 0.05)
    assert nothing.verdict == "inconclusive" and nothing.delta is None and nothing.fails
