"""Pure logic: one attempt's tool calls scored against its golden case (Layer 1 scoring).

Each part is judged on its own, because selection, arguments and order fail for
different reasons; `None` means the part does not apply to the case.

- Selection. Positive case: the FIRST call names the expected tool (`expect_tool`,
  or the first tool of `expect_sequence` when the case names only a sequence); a
  model that calls nothing fails. Negative case: correct iff nothing was called.
- Arguments (positive cases whose selection was correct): every key of
  `expect_args` matches under its `arg_match` mode in that first call. Extra
  arguments the model added are allowed: whether they are acceptable is the
  server's input schema's business, and the call's result shows it, not this
  score. Arguments that were not valid JSON fail. In sequence cases too, only
  the first call's arguments are judged.
- Sequence (cases with `expect_sequence`): the names of the calls, with
  immediate repeats collapsed (a retry of the same tool), equal the expected
  sequence exactly: same tools, same order, nothing extra in between or after.
  Repeats in the expected sequence are collapsed the same way.
- Over-call (negative cases): any call at all; the "irrelevance detection" of the
  Berkeley Function-Calling Leaderboard (Yan et al. 2024, gorilla.cs.berkeley.edu/blogs/
  8_berkeley_function_calling_leaderboard.html; Patil et al., ICML 2025).
- Task completion: the judge's verdict, when a judge ran.

    passed = selection and args is not False and sequence is not False and task_completed is not False
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from evalcore.behaviour.types import AttemptScore, JudgeVerdict
from evalcore.golden.model import GoldenCase
from evalcore.models.types import ToolCall
from evalcore.scoring.argmatch import MISSING, match_argument

NO_CALLS = "(no calls)"


def score_attempt(case: GoldenCase, calls: Sequence[ToolCall], judge: JudgeVerdict | None = None) -> AttemptScore:
    """Score the calls one attempt made, in the order it made them; reasons name every failed part."""
    reasons: list[str] = []
    names = [call.name for call in calls]

    if case.is_negative:
        selection_correct = not calls
        over_call: bool | None = bool(calls)
        if calls:
            reasons.append(f"called {', '.join(dict.fromkeys(names))} on a no-tool case")
    else:
        over_call = None
        expected_tool = case.expect_tool or case.expect_sequence[0]
        selection_correct = bool(calls) and calls[0].name == expected_tool
        if not selection_correct:
            reasons.append(f"expected {expected_tool}, called {names[0] if calls else 'no tool'}")

    args_correct: bool | None = None
    if selection_correct and not case.is_negative:
        args_correct = _arguments_match(case, calls[0], reasons)

    sequence_correct: bool | None = None
    if case.expect_sequence:
        called = collapse_repeats(names)
        expected = collapse_repeats(case.expect_sequence)
        sequence_correct = called == expected
        if not sequence_correct:
            reasons.append(f"order: {', '.join(called) or NO_CALLS} != {', '.join(expected)}")

    task_completed = judge.passed if judge is not None else None
    if judge is not None and not judge.passed:
        reasons.append(f"judge: {judge.reason}")

    passed = selection_correct and args_correct is not False and sequence_correct is not False and task_completed is not False
    return AttemptScore(
        selection_correct=selection_correct,
        args_correct=args_correct,
        sequence_correct=sequence_correct,
        over_call=over_call,
        task_completed=task_completed,
        passed=passed,
        reasons=tuple(reasons),
    )


def collapse_repeats(names: Sequence[str]) -> list[str]:
    """Tool names with immediate repeats merged: [a, a, b, a] -> [a, b, a]."""
    return [name for name, _ in groupby(names)]


def _arguments_match(case: GoldenCase, call: ToolCall, reasons: list[str]) -> bool:
    if not call.arguments_valid_json:
        raw = call.raw_arguments if len(call.raw_arguments) <= 60 else call.raw_arguments[:59] + "…"
        reasons.append(f"arguments are not valid JSON: {raw}")
        return False
    all_matched = True
    for argument, expected in case.expect_args.items():
        result = match_argument(expected, call.arguments.get(argument, MISSING), case.match_mode(argument))
        if not result.matched:
            all_matched = False
            reasons.append(f"{argument}: {result.reason}")
    return all_matched
