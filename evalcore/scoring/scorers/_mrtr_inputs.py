"""Pure helpers the MRTR scorers share: each input request of an attempt, with the tool call that got it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from evalcore.records import InputAnswer, InputRequest, ToolExecution

MRTR_ERRORS = ("mrtr_loop", "mrtr_malformed", "mrtr_unanswered")


@dataclass(frozen=True)
class AskedInput:
    tool: str
    arguments: dict[str, object]
    request: InputRequest
    answer: InputAnswer | None


def asked_inputs(executions: Sequence[ToolExecution]) -> Iterator[AskedInput]:
    for execution in executions:
        for round_ in execution.rounds:
            for request in round_.requests:
                yield AskedInput(execution.call.name, dict(execution.call.arguments), request, round_.answers.get(request.key))
