"""Pure logic: one attempt scored by every registered scorer (Layer 1 and 2 scoring).

Each part is judged on its own, by its own scorer (`evalcore.scoring.scorers`),
because selection, arguments, order, execution and robustness fail for
different reasons. An attempt passes when every applicable score of a gating
scorer is at its best value (see `evalcore.scoring.registry`):

    passed = selection and arguments is not False and sequence is not False
             and judge is not False and (Layer 2 verdicts pass)

An attempt whose model call failed beyond its retries has no answer to score:
it fails with the model error as its reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalcore.golden.model import GoldenCase
from evalcore.records import AttemptScore, JudgeVerdict, Score, StateReading, ToolCall, ToolExecution, UserTurn
from evalcore.scoring.registry import AttemptInput, registered, verdict_score


def score_attempt(
    case: GoldenCase,
    calls: Sequence[ToolCall],
    judge: JudgeVerdict | None = None,
    *,
    executions: Sequence[ToolExecution] = (),
    final_text: str | None = None,
    faults_fired: int = 0,
    model_error: str | None = None,
    user_turns: Sequence[UserTurn] = (),
    state: Sequence[StateReading] = (),
    stop_reason: str | None = None,
) -> AttemptScore:
    """Score the calls one attempt made, in the order it made them; reasons name every failed part."""
    attempt = AttemptInput(case, calls, executions, final_text, judge, faults_fired, user_turns, state, stop_reason)
    scores: dict[str, Score] = {}
    passed = True
    for scorer in registered():
        if model_error is not None and scorer.id == "selection":
            score = verdict_score(scorer.id, False, [f"model error: {model_error}"])
        elif model_error is not None and not scorer.id.startswith(("robustness", "attack", "refusal")):
            score = Score(scorer.id, None, False)
        else:
            score = scorer.score(attempt, scores)
        scores[scorer.id] = score
        passed = passed and scorer.passes(score)
    ordered = tuple(scores.values())
    return AttemptScore(ordered, passed, tuple(reason for score in ordered for reason in score.reasons))
