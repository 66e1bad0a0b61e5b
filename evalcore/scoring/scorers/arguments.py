"""Pure logic: the `arguments` scorer: the first call's arguments against `expect_args` (Layer 1).

Applies to positive cases whose selection was correct: every key of
`expect_args` matches under its `arg_match` mode in that first call. Extra
arguments the model added are allowed: whether they are acceptable is the
server's input schema's business, and the call's result shows it, not this
score. Arguments that were not valid JSON fail. In sequence cases too, only
the first call's arguments are judged.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.golden.model import GoldenCase
from evalcore.records import Score
from evalcore.redaction import clip
from evalcore.scoring.argmatch import MISSING, match_argument
from evalcore.scoring.registry import AttemptInput, not_applicable, scorer, verdict_score

ID = "arguments"


def _positive(case: GoldenCase) -> bool:
    return not case.is_negative


@scorer(ID, title="argument correctness", metric="argument_accuracy", applies_to=_positive, after=("selection",))
def arguments(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    selection = earlier.get("selection")
    if selection is None or selection.verdict is not True:
        return not_applicable(ID)
    call = attempt.calls[0]
    if not call.arguments_valid_json:
        raw = clip(call.raw_arguments, 60)
        return verdict_score(ID, False, [f"arguments are not valid JSON: {raw}"])
    reasons = []
    for argument, expected in attempt.case.expect_args.items():
        result = match_argument(expected, call.arguments.get(argument, MISSING), attempt.case.match_mode(argument))
        if not result.matched:
            reasons.append(f"{argument}: {result.reason}")
    return verdict_score(ID, not reasons, reasons)
