"""Pure logic: one attempt scored by every registered scorer (Layer 1 and 2 scoring).

Each part is judged on its own, by its own scorer (`evalcore.scoring.scorers`),
because selection, arguments, order, execution, the final answer and
robustness fail for different reasons. An attempt passes when every applicable
score of a gating scorer is at its best value (see `evalcore.scoring.registry`).

An errored attempt (`evalcore.taxonomy`: the model call failed beyond its
retries, or the judge could not grade) has nothing to score: it gets no score,
does not pass, and is in no quality metric's denominator.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalcore.golden.model import GoldenCase
from evalcore.records import AttemptScore, JudgeVerdict, Score, StateReading, ToolCall, ToolExecution, UserTurn
from evalcore.scoring.registry import AttemptInput, registered


def score_attempt(
    case: GoldenCase,
    calls: Sequence[ToolCall],
    judge: JudgeVerdict | None = None,
    *,
    executions: Sequence[ToolExecution] = (),
    final_text: str | None = None,
    faults_fired: int = 0,
    errored: str | None = None,
    user_turns: Sequence[UserTurn] = (),
    state: Sequence[StateReading] = (),
    stop_reason: str | None = None,
    model_turns: int = 0,
    judge_expected: bool = False,
    refused: bool = False,
    ungated: frozenset[str] = frozenset(),
) -> AttemptScore:
    """Score the calls one attempt made, in the order it made them; reasons name every failed part.

    `errored` is the reason of an errored attempt (`evalcore.taxonomy`): it gets no score at all
    and does not pass; the reason is kept so the report can say what happened. The scorers in `ungated` score and
    are shown, but their verdicts do not enter `passed` (a judge not trusted under `--judge-policy trusted`), nor the
    reasons a failed attempt gives.
    """
    if errored is not None:
        return AttemptScore((), False, (errored,))
    attempt = AttemptInput(case, calls, executions, final_text, judge, faults_fired, user_turns, state, stop_reason, model_turns, judge_expected, refused)
    scores: dict[str, Score] = {}
    passed = True
    for scorer in registered():
        score = scorer.score(attempt, scores)
        scores[scorer.id] = score
        passed = passed and (scorer.id in ungated or scorer.passes(score))
    ordered = tuple(scores.values())
    return AttemptScore(ordered, passed, tuple(reason for score in ordered if score.scorer not in ungated for reason in score.reasons))
