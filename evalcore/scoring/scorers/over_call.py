"""Pure logic: the `over_call` scorer: any tool call at all on a negative (no-tool) case (Layer 1).

The "irrelevance detection" of the Berkeley Function-Calling Leaderboard (Yan
et al. 2024, gorilla.cs.berkeley.edu/blogs/8_berkeley_function_calling_leaderboard.html;
Patil et al., ICML 2025). Value 1 means the model called a tool it should not
have; lower is better. It does not gate on its own: on a negative case the
selection scorer already fails such an attempt (and gives the reason).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.golden.model import GoldenCase
from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, scorer, verdict_score

ID = "over_call"


def _negative(case: GoldenCase) -> bool:
    return case.is_negative


@scorer(ID, title="over-call", metric="over_call_rate", applies_to=_negative, gates=False, direction="lower", regression=True)
def over_call(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    return verdict_score(ID, bool(attempt.calls))
