"""Pure logic: the `state.reached` scorer: the server's state after the conversation is the one the case expects.

Each `expect_state` read was judged when it ran (`evalcore.behaviour.conversation.state_verdict`).

    value = reads that matched / reads

It gates (value 1 to pass). It applies to cases with `expect_state`; an attempt
that ended before the reads ran scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.golden.model import GoldenCase
from evalcore.records import Score
from evalcore.redaction import clip
from evalcore.scoring.registry import AttemptInput, scorer

ID = "state.reached"


def _expects_state(case: GoldenCase) -> bool:
    return bool(case.expect_state)


@scorer(ID, title="state reached", applies_to=_expects_state)
def state_reached(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    if not attempt.state:
        return Score(ID, 0.0, True, ("the server's state was not read: the attempt ended first",))
    matched = sum(1 for reading in attempt.state if reading.passed)
    reasons = tuple(clip(reading.reason, 300) for reading in attempt.state if not reading.passed)
    return Score(ID, round(matched / len(attempt.state), 4), True, reasons)
