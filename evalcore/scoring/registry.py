"""Pure logic: the registry of attempt scorers, keyed by stable id (Layer 1 and 2 scoring).

A scorer is one module in `evalcore/scoring/scorers/`: a small function that
turns one attempt (its golden case, tool calls, executions, final answer,
judge verdict) into a typed `Score`, registered with `@scorer`. Everything a
consumer needs to know about it is declared there and nowhere else:

- `title`: how pages and reports name it;
- `metric`: the name its mean is published under (`score:<id>` when not given);
- `direction`: `higher` or `lower` is better;
- `gates`: whether it enters `passed`. An attempt passes when every applicable
  score of a gating scorer is at its best value (1, or 0 when lower is better);
- `regression`: whether the run gate compares its metric with the baseline's
  (by default, a scorer that gates);
- `applies_to(case)`: the cases it has something to say about; on any other
  case it yields a `Score` with `applies=False` and is in none of its
  denominators (it may also decline a single attempt, e.g. arguments after the
  wrong tool);
- `after`: the scorers whose scores it reads (it sees them in `earlier`).

The metrics, the gate, the report and its schema, the model summary, the
matrix cell, the drill-down and the export all read this registry: adding a
scorer is adding one file (docs/metrics.md has a worked example). Scorers run
in dependency order (`after`), ties broken by id.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from evalcore.golden.model import GoldenCase
from evalcore.records import JudgeVerdict, Score, StateReading, ToolCall, ToolExecution, UserTurn

Direction = Literal["higher", "lower"]
PASS_RATE = "pass_rate"  # not a scorer's: the share of attempts that passed every gating scorer


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
    model_turns: int = 0  # model responses the attempt got
    judge_expected: bool = False  # a judge was configured and the case has a rubric
    refused: bool = False  # the model's last answer was a refusal (`message.refusal`); `final_text` is that refusal


ScoreFunction = Callable[[AttemptInput, Mapping[str, Score]], Score]


@dataclass(frozen=True)
class Scorer:
    id: str
    title: str
    metric: str
    applies_to: Callable[[GoldenCase], bool]
    gates: bool
    direction: Direction
    regression: bool
    after: tuple[str, ...]
    function: ScoreFunction

    @property
    def lower_is_better(self) -> bool:
        return self.direction == "lower"

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
_ordered: tuple[Scorer, ...] | None = None


def scorer(
    scorer_id: str,
    *,
    title: str,
    applies_to: Callable[[GoldenCase], bool],
    metric: str | None = None,
    direction: Direction = "higher",
    gates: bool = True,
    regression: bool | None = None,
    after: Sequence[str] = (),
) -> Callable[[ScoreFunction], ScoreFunction]:
    """Register the decorated function under `scorer_id` (ids and metric names are unique)."""

    def register(function: ScoreFunction) -> ScoreFunction:
        global _ordered
        published = metric or f"score:{scorer_id}"
        if scorer_id in REGISTRY:
            raise ValueError(f"scorer id {scorer_id!r} is registered twice")
        if any(existing.metric == published for existing in REGISTRY.values()):
            raise ValueError(f"metric {published!r} of scorer {scorer_id!r} is already published by another scorer")
        compared = gates if regression is None else regression
        REGISTRY[scorer_id] = Scorer(scorer_id, title, published, applies_to, gates, direction, compared, tuple(after), function)
        _ordered = None
        return function

    return register


def registered() -> tuple[Scorer, ...]:
    """Every scorer, in the order they run: each after the scorers it reads (`after`), ties by id."""
    global _ordered
    if _ordered is None:
        _discover()
        _ordered = _dependency_order(REGISTRY)
    return _ordered


def get(scorer_id: str) -> Scorer:
    registered()
    return REGISTRY[scorer_id]


def by_metric(metric: str) -> Scorer | None:
    """The scorer that publishes `metric`, if any."""
    return next((s for s in registered() if s.metric == metric), None)


def regression_metrics() -> tuple[tuple[str, Direction], ...]:
    """The metrics the run gate compares with the baseline, with their direction: every scorer's that asks for it, then the pass rate."""
    return (*((s.metric, s.direction) for s in registered() if s.regression), (PASS_RATE, "higher"))


def verdict_score(scorer_id: str, ok: bool, reasons: Sequence[str] = (), label: str | None = None) -> Score:
    """An applicable yes/no score: value 1 for yes, 0 for no."""
    return Score(scorer_id, 1.0 if ok else 0.0, True, tuple(reasons), label)


def not_applicable(scorer_id: str) -> Score:
    return Score(scorer_id, None, False)


def always(case: GoldenCase) -> bool:
    return True


def _discover() -> None:
    """Import every module of `evalcore.scoring.scorers` (its `_private` helpers excepted): each registers its scorers."""
    package = importlib.import_module("evalcore.scoring.scorers")
    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{module.name}")


def _dependency_order(scorers: Mapping[str, Scorer]) -> tuple[Scorer, ...]:
    ordered: list[Scorer] = []
    placed: set[str] = set()
    waiting = sorted(scorers.values(), key=lambda s: s.id)
    while waiting:
        ready = next((s for s in waiting if all(dep in placed for dep in s.after)), None)
        if ready is None:
            names = ", ".join(f"{s.id} (after {', '.join(s.after)})" for s in waiting)
            raise ValueError(f"scorers wait on scorers that are not registered or wait on each other: {names}")
        ordered.append(ready)
        placed.add(ready.id)
        waiting.remove(ready)
    return tuple(ordered)
