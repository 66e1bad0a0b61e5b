"""Pure logic: the `sequence` scorer: the tools called against `expect_sequence` or `expect_set` (Layer 1).

A sequence: the names of the calls, with immediate repeats collapsed (a retry
of the same tool), equal the expected sequence exactly: same tools, same order,
nothing extra in between or after. Repeats in the expected sequence are
collapsed the same way.

A set (parallel calls, any order): every tool of the set is called at least as
many times as the set lists it, and no other tool is called.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import groupby

from evalcore.golden.model import GoldenCase
from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, scorer, verdict_score

ID = "sequence"
NO_CALLS = "(no calls)"


def collapse_repeats(names: Sequence[str]) -> list[str]:
    """Tool names with immediate repeats merged: [a, a, b, a] -> [a, b, a]."""
    return [name for name, _ in groupby(names)]


def _has_sequence(case: GoldenCase) -> bool:
    return bool(case.expect_sequence or case.expect_set)


@scorer(ID, title="calls made (in order)", metric="sequence_accuracy", applies_to=_has_sequence, after=("arguments",))
def sequence(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    names = [call.name for call in attempt.calls]
    if attempt.case.expect_set:
        wanted, called = Counter(attempt.case.expect_set), Counter(names)
        reasons = [f"{tool}: called {called[tool]} of {count} times" for tool, count in wanted.items() if called[tool] < count]
        reasons += [f"{tool}: called, not in the expected set" for tool in called if tool not in wanted]
        return verdict_score(ID, not reasons, reasons)
    called_order = collapse_repeats(names)
    expected = collapse_repeats(attempt.case.expect_sequence)
    correct = called_order == expected
    return verdict_score(ID, correct, [] if correct else [f"order: {', '.join(called_order) or NO_CALLS} != {', '.join(expected)}"])
