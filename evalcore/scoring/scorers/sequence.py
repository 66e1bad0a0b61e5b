"""Pure logic: the `sequence` scorer: the order of tool calls against `expect_sequence` (Layer 1).

The names of the calls, with immediate repeats collapsed (a retry of the same
tool), equal the expected sequence exactly: same tools, same order, nothing
extra in between or after. Repeats in the expected sequence are collapsed the
same way.
"""

from __future__ import annotations

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
    return bool(case.expect_sequence)


@scorer(ID, title="call order", metric="sequence_accuracy", applies_to=_has_sequence, after=("arguments",))
def sequence(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    called = collapse_repeats([call.name for call in attempt.calls])
    expected = collapse_repeats(attempt.case.expect_sequence)
    correct = called == expected
    return verdict_score(ID, correct, [] if correct else [f"order: {', '.join(called) or NO_CALLS} != {', '.join(expected)}"])
