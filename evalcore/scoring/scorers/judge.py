"""Pure logic: the `judge` scorer: task completion as the judge model saw it (Layer 1).

Applies to an attempt a judge scored (a case with a rubric, a run with
`--judge`, an attempt that reached a final answer, a judge that answered).
Value 1 when the judge passed the answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, always, not_applicable, scorer, verdict_score

ID = "judge"


@scorer(ID, title="task completion (judge)", applies_to=always)
def judge(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    verdict = attempt.judge
    if verdict is None:
        return not_applicable(ID)
    return verdict_score(ID, verdict.passed, [] if verdict.passed else [f"judge: {verdict.reason}"])
