"""Pure logic: the `conversation.turns_to_completion` scorer: how many user messages the task took.

    value = 1 + the simulated user's follow-up messages, when the conversation ended with a final answer

Measured only (lower is better). It applies to cases with a `user:`; an attempt
that ended without a final answer (step limit, error) is not counted.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.golden.model import GoldenCase
from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, not_applicable, scorer

ID = "conversation.turns_to_completion"


def _has_user(case: GoldenCase) -> bool:
    return case.user is not None


@scorer(ID, title="turns to completion", applies_to=_has_user, gates=False, direction="lower")
def turns_to_completion(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    if attempt.stop_reason != "final":
        return not_applicable(ID)
    return Score(ID, float(1 + len(attempt.user_turns)), True)
