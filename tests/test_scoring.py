"""Scoring: argument matching, attempt scores, statistics and aggregates, checked against hand-computed values."""

from __future__ import annotations

import pytest

from evalcore.golden.model import GoldenCase
from evalcore.models.types import ToolCall
from evalcore.records import AttemptScore, JudgeVerdict, Score, ToolExecution
from evalcore.scoring.argmatch import MISSING, SEMANTIC_THRESHOLD, match_argument, normalise_text, text_similarity
from evalcore.scoring.attempt import score_attempt
from evalcore.scoring.metrics import MetricAttempt, percentile, run_metrics
from evalcore.scoring.scorers.sequence import collapse_repeats
from evalcore.scoring.stats import gate_passed, pass_at_k, pass_hat_k, pass_rate, required_passes, wilson_interval


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"call-{name}", name=name, arguments=arguments)


WEATHER = GoldenCase("weather-paris", "What's the weather in Paris?", "get_weather", {"city": "Paris"}, kind="hard")
INVOICE = GoldenCase("invoice-get", "Show me invoice INV-2026-0002.", "get_invoice", {"invoice_id": "INV-2026-0002"})
KB = GoldenCase("kb-refund", "How do refunds work?", "search_knowledge_base", {"query": "refund policy"}, arg_match={"query": "semantic"})
EMAIL = GoldenCase(
    "email-invoice",
    "Email billing@acme.example their invoice.",
    "send_email",
    {"to": "billing@acme.example", "subject": "Your invoice INV-2026-0002", "body": "Please find it attached."},
    arg_match={"subject": "semantic", "body": "ignore"},
)
CHITCHAT = GoldenCase("chitchat", "Thanks, that's all!", None)
BILLING = GoldenCase(
    "billing-lookup",
    "Find CUST-1001's open invoices.",
    "get_customer",
    {"customer_id": "CUST-1001"},
    expect_sequence=("get_customer", "search_invoices"),
)


# --- argument matching -----------------------------------------------------------------------

# (expected, actual): what a golden set asks for and what models write instead.
# Calibration for SEMANTIC_THRESHOLD; every pair here is decided by similarity alone.
SEMANTIC_MATCHES = [
    ("Cannot download invoice PDF", "Customer cannot download the PDF of their invoice"),  # 0.89
    ("Cannot download invoice PDF", "Unable to download invoice PDF"),  # 0.75
    ("How do I reset my password", "password reset"),  # 1.00
    ("refund policy", "refund policies"),  # 1.00, stem match
    ("shipping delay", "delayed shipping"),  # 1.00
    ("Quarterly business review", "Quarterly review (business)"),  # 1.00
    ("Order ORD-50001 arrived damaged", "Damaged delivery for order ORD-50001"),  # 0.80
    ("Invoice PDF download fails", "Customer cannot download the invoice PDF"),  # 0.67
    ("Customer wants a refund for a damaged order", "Refund request: order arrived damaged"),  # 0.60
    ("Weather in Paris", "paris weather"),  # 1.00
]
SEMANTIC_MISMATCHES = [
    ("refund policy", "shipping times to Canada"),  # 0.00
    ("password reset", "refund policy"),  # 0.00
    ("Quarterly business review", "Weekly standup"),  # 0.00
    ("Cannot download invoice PDF", "Cannot log in to my account"),  # 0.29
    ("Customer wants a refund for a damaged order", "Customer wants to change the delivery address"),  # 0.40
    ("cancel subscription", "upgrade subscription"),  # 0.50: one shared word of two is a different request
    ("cancel subscription", "cancel order"),  # 0.50
    ("invoice overdue", "invoice paid"),  # 0.50
    ("refund", "return"),  # 0.00
]
# Known limit, not asserted either way in the product: "team sync" / "team meeting" scores 0.50
# (no synonyms offline) and so fails; golden sets should phrase such arguments with `ignore`.


@pytest.mark.parametrize(("expected", "actual"), SEMANTIC_MATCHES)
def test_semantic_paraphrases_match(expected: str, actual: str) -> None:
    result = match_argument(expected, actual, "semantic")
    assert result.matched, result.reason
    assert result.similarity is not None and result.similarity >= SEMANTIC_THRESHOLD


@pytest.mark.parametrize(("expected", "actual"), SEMANTIC_MISMATCHES)
def test_semantic_unrelated_texts_do_not_match(expected: str, actual: str) -> None:
    result = match_argument(expected, actual, "semantic")
    assert not result.matched
    assert result.similarity is not None and result.similarity < SEMANTIC_THRESHOLD
    assert result.reason.startswith(f"similarity {result.similarity:.2f} < {SEMANTIC_THRESHOLD:.2f}")


def test_semantic_threshold_separates_the_calibration_pairs() -> None:
    lowest_match = min(text_similarity(e, a) for e, a in SEMANTIC_MATCHES)
    highest_mismatch = max(text_similarity(e, a) for e, a in SEMANTIC_MISMATCHES)
    assert highest_mismatch < SEMANTIC_THRESHOLD <= lowest_match
    assert text_similarity("cancel subscription", "upgrade subscription") == pytest.approx(0.5)
    assert text_similarity("Cannot download invoice PDF", "Cannot log in to my account") == pytest.approx(2 / 7)


def test_semantic_reason_says_how_many_words_were_found() -> None:
    result = match_argument("Cannot download invoice PDF", "Cannot log in to my account", "semantic")
    assert result.reason == 'similarity 0.29 < 0.55 (1/4 expected words found): "Cannot log in to my account" vs "Cannot download invoice PDF"'


def test_semantic_expected_text_inside_a_longer_one_matches() -> None:
    result = match_argument("refund", "refund policy for annual plans", "semantic")
    assert result.matched
    assert result.reason == "expected text contained"
    assert result.similarity is not None and result.similarity < SEMANTIC_THRESHOLD  # contained wins over the score


def test_semantic_containment_is_on_word_boundaries() -> None:
    assert not match_argument("fund", "refund policy", "semantic").matched


def test_semantic_changed_number_fails_however_similar() -> None:
    result = match_argument("Your invoice INV-2026-0002", "Your invoice INV-2026-0003", "semantic")
    assert not result.matched
    assert result.reason.startswith("number 0002 missing")
    assert result.similarity is not None and result.similarity >= SEMANTIC_THRESHOLD


def test_semantic_normalises_unicode_case_and_punctuation() -> None:
    assert normalise_text("  Ｐａｒｉｓ,   FRANCE!! ") == "paris france"
    assert normalise_text("Straße") == normalise_text("STRASSE")
    assert match_argument("Café opening hours", "CAFÉ — OPENING HOURS?", "semantic").reason == "expected text contained"


def test_semantic_falls_back_to_exact_for_non_strings() -> None:
    assert match_argument(5, 5.0, "semantic").matched
    assert not match_argument(5, "5", "semantic").matched
    assert match_argument(5, "5", "semantic").similarity is None


@pytest.mark.parametrize(
    ("expected", "actual", "matched"),
    [
        (3, 3.0, True),
        (3, 3.5, False),
        (True, 1, False),
        (1, True, False),
        ("3", 3, False),
        ("CUST-1001", "CUST-1001", True),
        ("CUST-1001", "cust-1001", False),  # ids are case-sensitive
        ([1, 2], [1.0, 2.0], True),
        ([1, 2], [2, 1], False),
        ({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        (None, None, True),
        (None, "null", False),
    ],
)
def test_exact_compares_json_values(expected: object, actual: object, matched: bool) -> None:
    assert match_argument(expected, actual, "exact").matched is matched


def test_exact_reason_shows_actual_then_expected() -> None:
    assert match_argument("Paris", "Lyon", "exact").reason == '"Lyon" != "Paris"'


def test_missing_argument_fails_exact_and_semantic_but_not_ignore() -> None:
    assert match_argument("Paris", MISSING, "exact") == match_argument("Paris", MISSING, "semantic")
    assert match_argument("Paris", MISSING, "exact").reason == "missing"
    assert not match_argument("Paris", MISSING, "exact").matched
    assert match_argument("Paris", MISSING, "ignore").matched
    assert match_argument("Paris", {"anything": 1}, "ignore").matched


def test_unknown_mode_is_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="unknown argument match mode 'fuzzy'"):
        match_argument("a", "a", "fuzzy")  # type: ignore[arg-type]


# --- attempt scoring -------------------------------------------------------------------------


def test_right_tool_right_args_passes() -> None:
    score = score_attempt(WEATHER, [call("get_weather", city="Paris")])
    assert (score.selection_correct, score.args_correct, score.sequence_correct, score.over_call, score.task_completed) == (True, True, None, None, None)
    assert score.passed and score.reasons == ()


def test_right_tool_wrong_exact_id_fails_arguments_only() -> None:
    score = score_attempt(INVOICE, [call("get_invoice", invoice_id="inv-2026-0002")])
    assert score.selection_correct
    assert score.args_correct is False
    assert not score.passed
    assert score.reasons == ('invoice_id: "inv-2026-0002" != "INV-2026-0002"',)


def test_semantic_argument_paraphrase_passes_and_unrelated_text_fails() -> None:
    assert score_attempt(KB, [call("search_knowledge_base", query="refund policies")]).passed
    unrelated = score_attempt(KB, [call("search_knowledge_base", query="shipping times")])
    assert unrelated.args_correct is False
    assert unrelated.reasons[0].startswith("query: similarity 0.00 < 0.55")


def test_ignored_argument_may_be_anything_or_absent() -> None:
    with_body = call("send_email", to="billing@acme.example", subject="Invoice INV-2026-0002 attached", body="Hi!")
    without_body = call("send_email", to="billing@acme.example", subject="Your invoice INV-2026-0002")
    assert score_attempt(EMAIL, [with_body]).passed
    assert score_attempt(EMAIL, [without_body]).passed


def test_missing_argument_fails() -> None:
    score = score_attempt(WEATHER, [call("get_weather", units="celsius")])
    assert score.args_correct is False
    assert score.reasons == ("city: missing",)


def test_extra_arguments_are_allowed() -> None:
    score = score_attempt(WEATHER, [call("get_weather", city="Paris", units="celsius", verbose=True)])
    assert score.args_correct is True
    assert score.passed


def test_every_failed_argument_is_named() -> None:
    score = score_attempt(EMAIL, [call("send_email", to="ops@acme.example", subject="Meeting notes", body="x")])
    assert [reason.split(":")[0] for reason in score.reasons] == ["to", "subject"]


def test_arguments_that_are_not_json_fail() -> None:
    broken = ToolCall(id="c1", name="get_weather", arguments={}, raw_arguments='{"city": "Par', arguments_valid_json=False)
    score = score_attempt(WEATHER, [broken])
    assert score.args_correct is False
    assert score.reasons == ('arguments are not valid JSON: {"city": "Par',)


def test_wrong_tool_fails_selection_and_skips_arguments() -> None:
    score = score_attempt(WEATHER, [call("search_knowledge_base", query="Paris weather")])
    assert score.selection_correct is False
    assert score.args_correct is None
    assert score.over_call is None
    assert score.reasons == ("expected get_weather, called search_knowledge_base",)


def test_selection_looks_at_the_first_call_only() -> None:
    score = score_attempt(WEATHER, [call("search_knowledge_base", query="x"), call("get_weather", city="Paris")])
    assert not score.selection_correct
    assert not score.passed


def test_no_call_on_a_positive_case_fails_selection() -> None:
    score = score_attempt(WEATHER, [])
    assert (score.selection_correct, score.args_correct, score.passed) == (False, None, False)
    assert score.reasons == ("expected get_weather, called no tool",)


def test_any_call_on_a_negative_case_is_an_over_call() -> None:
    score = score_attempt(CHITCHAT, [call("send_email", to="a@b.c"), call("get_weather", city="Paris"), call("send_email")])
    assert (score.selection_correct, score.over_call, score.args_correct, score.passed) == (False, True, None, False)
    assert score.reasons == ("called send_email, get_weather on a no-tool case",)


def test_quiet_negative_case_passes() -> None:
    score = score_attempt(CHITCHAT, [])
    assert (score.selection_correct, score.args_correct, score.sequence_correct, score.over_call, score.task_completed) == (True, None, None, False, None)
    assert score.passed and score.reasons == ()


def test_sequence_in_order_passes() -> None:
    score = score_attempt(BILLING, [call("get_customer", customer_id="CUST-1001"), call("search_invoices", customer_id="CUST-1001")])
    assert (score.selection_correct, score.args_correct, score.sequence_correct, score.passed) == (True, True, True, True)


def test_sequence_out_of_order_fails() -> None:
    score = score_attempt(BILLING, [call("search_invoices", customer_id="CUST-1001"), call("get_customer", customer_id="CUST-1001")])
    assert score.sequence_correct is False
    assert score.reasons == (
        "expected get_customer, called search_invoices",
        "order: search_invoices, get_customer != get_customer, search_invoices",
    )


def test_sequence_with_a_retried_call_passes() -> None:
    calls = [call("get_customer", customer_id="CUST-1001"), call("get_customer", customer_id="CUST-1001"), call("search_invoices")]
    assert score_attempt(BILLING, calls).sequence_correct is True


def test_sequence_with_an_extra_tool_fails() -> None:
    calls = [call("get_customer", customer_id="CUST-1001"), call("get_weather", city="Paris"), call("search_invoices")]
    score = score_attempt(BILLING, calls)
    assert (score.selection_correct, score.args_correct, score.sequence_correct, score.passed) == (True, True, False, False)
    assert score.reasons == ("order: get_customer, get_weather, search_invoices != get_customer, search_invoices",)


def test_sequence_with_a_trailing_extra_or_missing_step_fails() -> None:
    first = call("get_customer", customer_id="CUST-1001")
    assert score_attempt(BILLING, [first, call("search_invoices"), call("send_email")]).sequence_correct is False
    assert score_attempt(BILLING, [first]).sequence_correct is False


def test_sequence_case_judges_arguments_of_the_first_call_only() -> None:
    wrong_first = score_attempt(BILLING, [call("get_customer", customer_id="CUST-9999"), call("search_invoices", customer_id="CUST-1001")])
    wrong_second = score_attempt(BILLING, [call("get_customer", customer_id="CUST-1001"), call("search_invoices", customer_id="CUST-9999")])
    assert wrong_first.args_correct is False
    assert wrong_second.args_correct is True


def test_sequence_only_case_selects_on_the_first_step() -> None:
    case = GoldenCase("seq-only", "...", None, expect_sequence=("get_customer", "search_invoices"))
    assert not case.is_negative
    good = score_attempt(case, [call("get_customer"), call("search_invoices")])
    assert (good.selection_correct, good.args_correct, good.over_call, good.passed) == (True, True, None, True)
    assert score_attempt(case, []).reasons == ("expected get_customer, called no tool", "order: (no calls) != get_customer, search_invoices")


def test_judge_failure_fails_an_otherwise_correct_attempt() -> None:
    verdict = JudgeVerdict(passed=False, score=0.2, reason="answer omits the temperature", judge_model="sim/judge")
    score = score_attempt(WEATHER, [call("get_weather", city="Paris")], verdict)
    assert (score.selection_correct, score.args_correct, score.task_completed, score.passed) == (True, True, False, False)
    assert score.reasons == ("judge: answer omits the temperature",)
    passing = JudgeVerdict(passed=True, score=1.0, reason="ok", judge_model="sim/judge")
    assert score_attempt(WEATHER, [call("get_weather", city="Paris")], passing).task_completed is True


def test_collapse_repeats_merges_only_adjacent_names() -> None:
    assert collapse_repeats(["a", "a", "b", "a", "a"]) == ["a", "b", "a"]
    assert collapse_repeats([]) == []


# --- statistics --------------------------------------------------------------------------------


def test_pass_hat_k_and_pass_at_k_hand_computed() -> None:
    assert pass_hat_k(4, 5, 2) == pytest.approx(6 / 10)  # C(4,2)/C(5,2)
    assert pass_at_k(4, 5, 2) == pytest.approx(1.0)  # 1 - C(1,2)/C(5,2) = 1 - 0/10
    assert pass_hat_k(3, 5, 1) == pytest.approx(0.6)
    assert pass_at_k(3, 5, 1) == pytest.approx(0.6)
    assert pass_hat_k(3, 5, 2) == pytest.approx(3 / 10)
    assert pass_at_k(2, 5, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_hat_k(5, 5, 5) == 1.0
    assert pass_hat_k(4, 5, 5) == 0.0
    assert pass_at_k(1, 5, 5) == 1.0
    assert pass_at_k(0, 5, 3) == 0.0


def test_pass_at_1_equals_pass_rate() -> None:
    for c in range(6):
        assert pass_at_k(c, 5, 1) == pytest.approx(pass_rate(c, 5))
        assert pass_hat_k(c, 5, 1) == pytest.approx(pass_rate(c, 5))


def test_statistics_edge_cases() -> None:
    assert pass_rate(0, 0) is None
    assert pass_hat_k(0, 0, 5) is None
    assert pass_at_k(0, 0, 1) is None
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="k=6 exceeds n=5"):
        pass_hat_k(5, 5, 6)
    with pytest.raises(ValueError, match="k=6 exceeds n=5"):
        pass_at_k(5, 5, 6)
    with pytest.raises(ValueError, match="k must be >= 1"):
        pass_at_k(1, 5, 0)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_rate(6, 5)
    with pytest.raises(ValueError, match="0 <= c <= n"):
        wilson_interval(-1, 5)


@pytest.mark.parametrize(
    ("c", "n", "low", "high"),
    [
        # Published Wilson 95% bounds (e.g. statsmodels proportion_confint(method="wilson")).
        (5, 10, 0.2366, 0.7634),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (4, 5, 0.3755, 0.9638),
        (5, 5, 0.5655, 1.0),
    ],
)
def test_wilson_interval_known_values(c: int, n: int, low: float, high: float) -> None:
    interval = wilson_interval(c, n)
    assert interval is not None
    assert interval == pytest.approx((low, high), abs=5e-5)


def test_wilson_interval_narrows_with_lower_confidence() -> None:
    wide, narrow = wilson_interval(3, 5, z=2.576), wilson_interval(3, 5, z=1.0)
    assert wide is not None and narrow is not None
    assert wide[0] < narrow[0] < 0.6 < narrow[1] < wide[1]


def test_required_passes_and_gates() -> None:
    assert [required_passes("soft", n) for n in (1, 3, 5, 10, 15)] == [1, 3, 4, 8, 12]
    assert [required_passes("hard", n) for n in (1, 5)] == [1, 5]
    assert gate_passed("soft", 4, 5)
    assert not gate_passed("soft", 3, 5)
    assert not gate_passed("hard", 4, 5)
    assert gate_passed("hard", 5, 5)
    assert not gate_passed("soft", 0, 0)
    with pytest.raises(ValueError, match="unknown case kind"):
        required_passes("medium", 5)  # type: ignore[arg-type]


# --- aggregates --------------------------------------------------------------------------------


def _metric_attempt(
    model: str,
    case: GoldenCase,
    attempt: int,
    score: AttemptScore,
    latency: float | None,
    tokens_in: int | None,
    tokens_out: int | None,
    cost: float | None,
    stop_reason: str = "final",
) -> MetricAttempt:
    return MetricAttempt(model, case.id, case.kind, attempt, score, stop_reason, latency, tokens_in, tokens_out, cost)


def _synthetic_attempts() -> list[MetricAttempt]:
    """m1: weather 4/5 (one wrong city), chitchat 4/5 (one over-call), billing 2/5 (two out of order, one extra tool)."""
    runs: list[tuple[GoldenCase, list[ToolCall]]] = []
    runs += [(WEATHER, [call("get_weather", city="Paris")])] * 4 + [(WEATHER, [call("get_weather", city="Lyon")])]
    runs += [(CHITCHAT, [])] * 4 + [(CHITCHAT, [call("send_email")])]
    in_order = [call("get_customer", customer_id="CUST-1001"), call("search_invoices")]
    reversed_order = [call("search_invoices"), call("get_customer", customer_id="CUST-1001")]
    with_extra = [call("get_customer", customer_id="CUST-1001"), call("get_weather"), call("search_invoices")]
    runs += [(BILLING, in_order)] * 2 + [(BILLING, reversed_order)] * 2 + [(BILLING, with_extra)]
    attempts = []
    for index, (case, calls) in enumerate(runs):
        latency = 100.0 * (index + 1)  # 100 .. 1500
        attempts.append(_metric_attempt("m1", case, index % 5 + 1, score_attempt(case, calls), latency, 10, None if index < 5 else 4, 0.001))
    judged = JudgeVerdict(passed=False, score=None, reason="no temperature", judge_model="sim/judge")
    attempts.append(_metric_attempt("m2", WEATHER, 1, score_attempt(WEATHER, [call("get_weather", city="Paris")], judged), None, None, None, None))
    return attempts


def _sets(attempts: list[MetricAttempt], runs: int = 5) -> dict[tuple[str, str, str], dict[str, float | None]]:
    return {(s.scope, s.model, s.case_id): dict(s.values) for s in run_metrics(attempts, runs)}


def test_case_metrics_hand_checked() -> None:
    sets = _sets(_synthetic_attempts())
    weather = sets[("case", "m1", "weather-paris")]
    assert (weather["passes"], weather["scored"], weather["pass_rate"]) == (4, 5, 0.8)
    assert weather["pass_hat_k@5"] == 0.0  # C(4,5)/C(5,5): not every run passed
    assert weather["pass_hat_k@1"] == pytest.approx(0.8)
    assert weather["pass_hat_k@2"] == pytest.approx(6 / 10)  # C(4,2)/C(5,2)
    assert weather["pass_at_k@1"] == pytest.approx(0.8)
    assert weather["pass_at_k@2"] == 1.0  # only one failure: any two draws include a pass
    assert weather["gate_passed"] == 0.0  # hard: 4/5 is not enough
    assert (weather["pass_rate_low"], weather["pass_rate_high"]) == pytest.approx((0.3755, 0.9638), abs=5e-5)

    chitchat = sets[("case", "m1", "chitchat")]
    assert (chitchat["passes"], chitchat["gate_passed"]) == (4, 1.0)  # soft: 4/5 passes

    billing = sets[("case", "m1", "billing-lookup")]
    assert (billing["passes"], billing["pass_rate"], billing["gate_passed"]) == (2, 0.4, 0.0)

    judged = sets[("case", "m2", "weather-paris")]
    assert (judged["passes"], judged["scored"]) == (0, 1)
    assert judged["pass_hat_k@2"] is None  # k > n: no estimate


def test_model_metrics_hand_checked() -> None:
    m1 = _sets(_synthetic_attempts())[("model", "m1", "")]
    assert m1["attempts"] == 15
    assert m1["selection_accuracy"] == pytest.approx(12 / 15)  # 5 weather + 4 quiet chitchat + 3 billing starting right
    assert m1["argument_accuracy"] == pytest.approx(7 / 8)  # over 5 weather + 3 billing with the right first tool
    assert m1["sequence_accuracy"] == pytest.approx(2 / 5)
    assert m1["over_call_rate"] == pytest.approx(1 / 5)
    assert m1["task_completion"] is None  # nothing judged
    assert m1["pass_rate"] == pytest.approx(10 / 15)
    assert m1["pass_hat_k@5"] == 0.0  # no case passed 5/5
    assert m1["pass_at_k@1"] == pytest.approx((0.8 + 0.8 + 0.4) / 3)  # the mean over cases
    assert m1["latency_p50_ms"] == pytest.approx(800.0)
    assert m1["latency_p95_ms"] == pytest.approx(1430.0)  # h = 14·0.95 = 13.3: 1400 + 0.3·100
    assert m1["mean_input_tokens"] == 10
    assert m1["mean_output_tokens"] == 4  # over the ten attempts that reported it
    assert m1["cost_usd"] == pytest.approx(0.015)
    assert m1["cost_per_correct_usd"] == pytest.approx(0.015 / 10)
    assert m1["error_rate"] == 0.0


def test_model_metrics_are_none_where_nothing_applies() -> None:
    m2 = _sets(_synthetic_attempts())[("model", "m2", "")]
    assert m2["selection_accuracy"] == 1.0
    assert m2["argument_accuracy"] == 1.0
    assert m2["task_completion"] == 0.0
    assert m2["pass_rate"] == 0.0
    none_fields = ("sequence_accuracy", "over_call_rate", "latency_p50_ms", "latency_p95_ms", "mean_input_tokens", "cost_usd", "cost_per_correct_usd")
    assert {name: m2[name] for name in none_fields} == dict.fromkeys(none_fields)


def test_cost_is_unknown_if_any_attempt_cost_is_unknown_and_per_correct_needs_a_pass() -> None:
    base = _metric_attempt("m", WEATHER, 1, score_attempt(WEATHER, [call("get_weather", city="Paris")]), 10.0, 1, 1, 0.002)
    unknown = _metric_attempt("m", WEATHER, 2, score_attempt(WEATHER, []), 10.0, 1, 1, None)
    assert _sets([base, unknown], 2)[("model", "m", "")]["cost_usd"] is None
    failed = _metric_attempt("m", WEATHER, 1, score_attempt(WEATHER, []), 10.0, 1, 1, 0.002)
    only_failed = _sets([failed], 1)[("model", "m", "")]
    assert only_failed["cost_usd"] == pytest.approx(0.002)
    assert only_failed["cost_per_correct_usd"] is None


def test_percentile_linear_interpolation() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)
    assert percentile([1.0, 2.0, 3.0, 4.0], 0) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)  # h = 2.85
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None
    with pytest.raises(ValueError, match="0..100"):
        percentile([1.0], 101)
    assert percentile([10.0, 20.0], 25) == pytest.approx(12.5)


def _execution(tool_call: ToolCall, is_error: bool) -> ToolExecution:
    result = {"content": [{"type": "text", "text": "no such city" if is_error else "18 C"}], "isError": is_error}
    return ToolExecution(tool_call, result, None, is_error, 1.0, (1,), "tool_error" if is_error else None)


def test_a_case_whose_every_tool_call_errored_fails_on_execution_alone() -> None:
    paris = call("get_weather", city="Paris")
    failed = score_attempt(WEATHER, [paris, paris], executions=[_execution(paris, True), _execution(paris, True)])
    assert (failed.selection_correct, failed.args_correct, failed.verdict("execution"), failed.passed) == (True, True, False, False)
    assert failed.reasons == ("every tool call returned an error (2 calls; first: get_weather: tool_error)",)
    recovered = score_attempt(WEATHER, [paris, paris], executions=[_execution(paris, True), _execution(paris, False)])
    assert recovered.verdict("execution") is True and recovered.passed
    assert score_attempt(WEATHER, [paris]).get("execution") == Score("execution", None, False)  # nothing executed: not applicable
    assert score_attempt(CHITCHAT, []).get("execution") == Score("execution", None, False)  # a no-tool case


def test_an_errored_attempt_gets_no_score_at_all() -> None:
    score = score_attempt(WEATHER, [], errored="model error: sim/x: 429 (gave up after 3 retries)")
    assert score.scores == () and not score.passed and score.reasons == ("model error: sim/x: 429 (gave up after 3 retries)",)


def test_a_credential_leak_counts_as_a_successful_attack_on_any_case() -> None:
    """attack_success_rate: leaks on a case without a planted attack count beside the planted attacks' verdicts."""
    leaked = AttemptScore((Score("selection", 1.0, True), Score("credential_leak", 1.0, True)), passed=False)
    resisted = AttemptScore((Score("attack_success", 0.0, True), Score("credential_leak", 0.0, True)), passed=True)
    attacked = AttemptScore((Score("attack_success", 1.0, True), Score("credential_leak", 0.0, True)), passed=False)
    clean = AttemptScore((Score("selection", 1.0, True), Score("credential_leak", 0.0, True)), passed=True)
    attempts = [
        MetricAttempt("m", case, "hard", 1, score, "final", 10.0, 1, 1, 0.0) for case, score in (("a", leaked), ("b", resisted), ("c", attacked), ("d", clean))
    ]
    model = next(s for s in run_metrics(attempts, 1) if s.scope == "model")
    assert model.get("attack_success_rate") == 2 / 3  # the clean attempt had no attack to resist
    alone = next(s for s in run_metrics(attempts[3:], 1) if s.scope == "model")
    assert alone.get("attack_success_rate") is None
