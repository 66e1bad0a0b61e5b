"""Pure logic: the `mrtr.rounds_per_call` scorer: how many input_required rounds a call took (MRTR).

    value = mean rounds over the attempt's calls that had at least one round

Measured only (it does not gate: a call that kept asking past the round limit
already fails `mrtr.input_requests_handled`). Not applicable when no call had a round.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, always, not_applicable, scorer

ID = "mrtr.rounds_per_call"


@scorer(ID, title="rounds per call", applies_to=always, gates=False, direction="lower")
def rounds_per_call(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    counts = [len(e.rounds) for e in attempt.executions if e.rounds]
    if not counts:
        return not_applicable(ID)
    return Score(ID, round(sum(counts) / len(counts), 4), True)
