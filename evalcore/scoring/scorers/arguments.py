"""Pure logic: the `arguments` scorer: the arguments of every expected call against what it must pass (Layer 1).

Applies to positive cases whose selection was correct. A case with one
expected call (`expect_tool` with `expect_args`) judges the first call: every
key of `expect_args` matches under its `arg_match` mode. A case whose
`expect_sequence` or `expect_set` lists calls with their own `args` judges
every one of them: each expected call must be served by its own call of the
same tool whose arguments match (a call serves one expected call at most; the
pairing is found whatever the order, which is the `sequence` scorer's to
judge). Extra arguments the model added are allowed: whether they are
acceptable is the server's input schema's business, and the call's result
shows it, not this score. Arguments that were not valid JSON fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalcore.golden.model import ExpectedCall, GoldenCase
from evalcore.records import Score, ToolCall
from evalcore.redaction import clip
from evalcore.scoring.argmatch import MISSING, match_argument
from evalcore.scoring.registry import AttemptInput, not_applicable, scorer, verdict_score

ID = "arguments"


def _positive(case: GoldenCase) -> bool:
    return not case.is_negative


def call_mismatches(expected: ExpectedCall, call: ToolCall) -> list[str]:
    """Why `call` does not pass `expected`'s arguments (nothing when it does), one reason per argument."""
    if not call.arguments_valid_json:
        return [f"arguments are not valid JSON: {clip(call.raw_arguments, 60)}"]
    reasons = []
    for argument, value in expected.args.items():
        result = match_argument(value, call.arguments.get(argument, MISSING), expected.match_mode(argument))
        if not result.matched:
            reasons.append(f"{argument}: {result.reason}")
    return reasons


def pair_calls(expected: Sequence[ExpectedCall], calls: Sequence[ToolCall]) -> dict[int, int]:
    """A largest pairing of expected calls (by index) to calls that pass them, each call used once (augmenting paths)."""
    fits = [[j for j, call in enumerate(calls) if call.name == want.tool and not call_mismatches(want, call)] for want in expected]
    owner: dict[int, int] = {}  # call index -> expected index

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(expected)):
        place(i, set())
    return {i: j for j, i in owner.items()}


@scorer(ID, title="argument correctness", metric="argument_accuracy", applies_to=_positive, after=("selection",))
def arguments(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    selection = earlier.get("selection")
    if selection is None or selection.verdict is not True:
        return not_applicable(ID)
    case = attempt.case
    if not case.expect_calls:  # one expected call: the first call is it
        reasons = call_mismatches(case.expected_calls()[0], attempt.calls[0])
        return verdict_score(ID, not reasons, reasons)
    expected = [want for want in case.expect_calls if want.args]
    paired = pair_calls(expected, attempt.calls)
    reasons = []
    for index, want in enumerate(expected):
        if index in paired:
            continue
        candidates = [call for call in attempt.calls if call.name == want.tool]
        label = f"{want.tool} (line {want.line})" if want.line else want.tool
        if not candidates:
            reasons.append(f"{label}: not called")
        else:  # the closest call's reasons: the one with the fewest mismatched arguments
            closest: list[str] = min((call_mismatches(want, call) for call in candidates), key=lambda found: len(found))
            reasons.append(f"{label}: " + "; ".join(closest))
    return verdict_score(ID, not reasons, reasons)
