"""I/O layer: ask a judge model whether a final answer meets the published rubric.

The prompt and the verdict format live in `judge_prompt` (pure); this module
makes the call. Any litellm model can judge; `sim/judge` is the offline one.
A judge reply that cannot be read is a failed verdict saying so, while a judge
call that fails beyond its retries raises `ModelError`, like any model call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalcore.models.adapter import IN_PROCESS, ModelCaller
from evalcore.models.judge_prompt import judge_messages, parse_verdict
from evalcore.models.tool_format import ToolNameMap
from evalcore.models.types import ModelSpec
from evalcore.records import JudgeVerdict
from evalcore.redaction import redact


async def judge_answer(
    judge: ModelSpec,
    *,
    rubric: str,
    case_rubric: str | None,
    prompt: str,
    tool_calls_summary: str,
    final_text: str | None,
    models: ModelCaller = IN_PROCESS,
    context: Mapping[str, Any] | None = None,
) -> JudgeVerdict:
    """The judge's verdict; `context` (the attempt's case id, attempt and run date) goes with the call, as for the model's."""
    # The answer and the calls may quote a secret the model was handed or echoed: the judge never sees it.
    messages = redact(judge_messages(rubric=rubric, case_rubric=case_rubric, prompt=prompt, tool_calls_summary=tool_calls_summary, final_text=final_text))
    turn = await models.complete(judge, messages, [], ToolNameMap(), context={**(context or {}), "purpose": "judge"})
    return parse_verdict(turn.text, judge.name)
