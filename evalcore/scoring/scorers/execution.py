"""Pure logic: the `execution` scorer: did the attempt's tool calls work on the server (Layer 1).

Selection and execution fail for different reasons, so they are scored apart:
a model can pick the right tool with the right arguments and still get
nothing back (the server rejects every call, the tool is broken). Applies to
positive cases without an injected fault (under a fault, `robustness` judges
what the model did with the failure), without `expect_state` or
`expect_input_requests` (there a call may rightly fail, e.g. after the user
declined, and the state and input-request scorers judge what the calls
achieved), and to attempts that made at least one call. Value 1 when at least one call returned a result that is not an error;
0 when every call returned an error, which fails the attempt.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.golden.model import GoldenCase
from evalcore.records import Score
from evalcore.redaction import clip
from evalcore.scoring.registry import AttemptInput, not_applicable, scorer, verdict_score

ID = "execution"


def _positive_without_fault(case: GoldenCase) -> bool:
    return not case.is_negative and case.inject is None and not case.expect_state and case.expect_input_requests is None


@scorer(ID, title="tool execution success", applies_to=_positive_without_fault)
def execution(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    if not attempt.executions:
        return not_applicable(ID)
    if any(not execution.is_error for execution in attempt.executions):
        return verdict_score(ID, True)
    first = attempt.executions[0]
    detail = first.error or first.error_type or "isError"
    calls = f"{len(attempt.executions)} call{'s' if len(attempt.executions) != 1 else ''}"
    return verdict_score(ID, False, [f"every tool call returned an error ({calls}; first: {first.call.name}: {clip(detail, 120)})"])
