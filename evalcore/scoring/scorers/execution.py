"""Pure logic: the `execution` scorer: did the attempt's tool calls work on the server (Layer 1).

Selection and execution fail for different reasons, so they are scored apart
(the seed's split between selection quality and execution quality): a model can
pick the right tool with the right arguments and still get nothing back.

A *server error* (`evalcore.taxonomy.server_error`: the server timed out,
crashed, or answered a JSON-RPC error or an invalid result to a well-formed
call) is never excluded: on any case without an injected fault, one such call
fails execution and the attempt, and the reason names the server. So does an
attempt the server ended before the model ran (stop reason `server_error`).

Beyond server errors, on positive cases without `expect_state` or
`expect_input_requests` (there a call may rightly fail, e.g. after the user
declined, and the state and input-request scorers judge what the calls
achieved), value 1 when some call returned a result that is not an error,
0 when every call returned an error (a tool error result): the model got
nothing done; other cases without a server error are not scored. Not applicable to attempts that made no call, and
to cases with `inject:` (the robustness scorer judges what the model did with
the failure it was given).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.golden.model import GoldenCase
from evalcore.records import Score, ToolExecution
from evalcore.redaction import clip
from evalcore.scoring.registry import AttemptInput, always, not_applicable, scorer, verdict_score
from evalcore.taxonomy import server_error

ID = "execution"


def _judges_tool_errors(case: GoldenCase) -> bool:
    return not case.is_negative and case.inject is None and not case.expect_state and case.expect_input_requests is None


@scorer(ID, title="tool execution success", metric="execution_accuracy", applies_to=always, after=("sequence",))
def execution(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    if attempt.stop_reason == "server_error":
        return verdict_score(ID, False, ["server error: the server failed before the model could run (see the attempt's error)"])
    if attempt.case.inject is not None or not attempt.executions:
        return not_applicable(ID)
    failed = [e for e in attempt.executions if server_error(e.error_type, e.fault)]
    if failed:
        count = len(failed)
        return verdict_score(ID, False, [f"server error on {count} call{'s' if count != 1 else ''}; first: {_describe(failed[0])}"])
    if not _judges_tool_errors(attempt.case):
        return not_applicable(ID)
    if any(not e.is_error for e in attempt.executions):
        return verdict_score(ID, True)
    count = len(attempt.executions)
    return verdict_score(ID, False, [f"every tool call returned an error ({count} call{'s' if count != 1 else ''}; first: {_describe(attempt.executions[0])})"])


def _describe(execution: ToolExecution) -> str:
    return f"{execution.call.name}: {clip(execution.error or execution.error_type or 'isError', 120)}"
