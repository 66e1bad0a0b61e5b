"""Pure logic: the `judge` scorer: task completion as the judge model saw it (Layer 1).

Applies to an attempt that was to be judged: the run has `--judge` and the
case a rubric. Value 1 when the judge passed the answer; 0 when it failed it,
and 0 when there was no final answer to judge (the step limit ended the
attempt). A judge that could not grade makes the attempt errored (judge), so
no attempt passes without its rubric (`evalcore.taxonomy`).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, always, not_applicable, scorer, verdict_score

ID = "judge"


@scorer(ID, title="task completion (judge)", metric="task_completion", applies_to=always, after=("execution",))
def judge(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    verdict = attempt.judge
    if verdict is None:
        if attempt.judge_expected and attempt.stop_reason == "step_limit":
            return verdict_score(ID, False, ["judge: no final answer to judge"])
        return not_applicable(ID)
    return verdict_score(ID, verdict.passed, [] if verdict.passed else [f"judge: {verdict.reason}"])
