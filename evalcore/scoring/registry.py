"""Pure logic: the registry of attempt scorers, keyed by stable id (Layer 1 and 2 scoring).

A scorer is a small function that turns one attempt (its golden case, tool
calls, executions, final answer, judge verdict) into a typed `Score`. Its id
is stable: the store's `attempt_scores` rows, the report and the metrics all
name it. Each scorer declares

- `applies_to(case)`: the cases it has something to say about; on any other
  case it yields a `Score` with `applies=False` and is in none of its
  denominators (it may also decline a single attempt, e.g. arguments after the
  wrong tool);
- `gates`: whether it enters `passed`. An attempt passes when every applicable
  score of a gating scorer is at its best value (1, or 0 when
  `lower_is_better`). Non-gating scorers (over-call, refusal) are measured only.

Scorers run in registration order (`evalcore.scoring.scorers` imports them in
that order) and each sees the scores before it, so a scorer may depend on an
earlier one. Adding a scorer is one new module in `evalcore/scoring/scorers/`
plus its line in that package's `__init__`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from evalcore.golden.model import GoldenCase
from evalcore.records import JudgeVerdict, Score, StateReading, ToolCall, ToolExecution, UserTurn


@dataclass(frozen=True)
class AttemptInput:
    """What a scorer may read about one attempt."""

    case: GoldenCase
    calls: Sequence[ToolCall]  # in the order the model made them
    executions: Sequence[ToolExecution] = ()
    final_text: str | None = None
    judge: JudgeVerdict | None = None
    faults_fired: int = 0  # requests the fault proxy answered with the case's call fault
    user_turns: Sequence[UserTurn] = ()  # the simulated user's follow-up messages
    state: Sequence[StateReading] = ()  # the case's `expect_state` reads after the conversation
    stop_reason: str | None = None


ScoreFunction = Callable[[AttemptInput, Mapping[str, Score]], Score]


@dataclass(frozen=True)
class Scorer:
    id: str
    title: str
    applies_to: Callable[[GoldenCase], bool]
    gates: bool
    lower_is_better: bool
    function: ScoreFunction

    def score(self, attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
        if not self.applies_to(attempt.case):
            return not_applicable(self.id)
        return self.function(attempt, earlier)

    def passes(self, score: Score) -> bool:
        """Whether an applicable score lets the attempt pass (always true for a scorer that does not gate)."""
        if not self.gates or not score.applies or score.value is None:
            return True
        return score.value <= 0.0 if self.lower_is_better else score.value >= 1.0


REGISTRY: dict[str, Scorer] = {}


def scorer(
    scorer_id: str, *, title: str, applies_to: Callable[[GoldenCase], bool], gates: bool = True, lower_is_better: bool = False
) -> Callable[[ScoreFunction], ScoreFunction]:
    """Register the decorated function under `scorer_id` (ids are unique)."""

    def register(function: ScoreFunction) -> ScoreFunction:
        if scorer_id in REGISTRY:
            raise ValueError(f"scorer id {scorer_id!r} is registered twice")
        REGISTRY[scorer_id] = Scorer(scorer_id, title, applies_to, gates, lower_is_better, function)
        return function

    return register


def registered() -> tuple[Scorer, ...]:
    """Every scorer, in the order they run."""
    import evalcore.scoring.scorers  # noqa: F401  (registers the scorers on first use)

    return tuple(REGISTRY.values())


def get(scorer_id: str) -> Scorer:
    registered()
    return REGISTRY[scorer_id]


def verdict_score(scorer_id: str, ok: bool, reasons: Sequence[str] = (), label: str | None = None) -> Score:
    """An applicable yes/no score: value 1 for yes, 0 for no."""
    return Score(scorer_id, 1.0 if ok else 0.0, True, tuple(reasons), label)


def not_applicable(scorer_id: str) -> Score:
    return Score(scorer_id, None, False)


def always(case: GoldenCase) -> bool:
    return True
