"""Pure logic: the `selection` scorer: did the attempt pick the right tool, or rightly none (Layer 1).

Positive case: the FIRST call names the expected tool (`expect_tool`, or the
first tool of `expect_sequence` when the case names only a sequence, or any
tool of `expect_set`); a model that calls nothing fails ("refused" when it
answered with a refusal). Negative case: correct iff nothing was called (a
refusal is a correct non-call).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, always, scorer, verdict_score

ID = "selection"


@scorer(ID, title="tool selection", metric="selection_accuracy", applies_to=always)
def selection(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    case, calls = attempt.case, attempt.calls
    names = [call.name for call in calls]
    if case.is_negative:
        reasons = [f"called {', '.join(dict.fromkeys(names))} on a no-tool case"] if calls else []
        return verdict_score(ID, not calls, reasons)
    expected_tools = case.first_tools()
    correct = bool(calls) and calls[0].name in expected_tools
    if not calls and attempt.refused:
        return verdict_score(ID, False, ["refused"])
    expected = " or ".join(expected_tools)
    return verdict_score(ID, correct, [] if correct else [f"expected {expected}, called {names[0] if calls else 'no tool'}"])
