"""Pure logic: the judge prompt (rubric, task, tool calls, answer in tagged sections) and reading its verdict.

The sections are wrapped in XML-like tags so any judge model can tell them
apart, and so the offline `sim/judge` can read them back with `section()`.
The judge must answer `{"pass": bool, "score": float 0..1, "reason": str}`;
code fences and text around the JSON object are tolerated.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalcore.models.redaction import redact
from evalcore.records import JudgeVerdict
from evalcore.redaction import clip

JUDGE_SYSTEM_PROMPT = (
    "You grade an AI assistant's work on one task against a published rubric. "
    "Judge only what the transcript shows; do not reward confident claims the tool results do not support. "
    'Reply with one JSON object and nothing else: {"pass": true or false, "score": a number from 0 to 1, "reason": "one sentence"}.'
)
SECTIONS = ("rubric", "case_rubric", "task", "tool_calls", "final_answer")
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
MAX_QUOTED_OUTPUT = 200


def judge_user_message(*, rubric: str, case_rubric: str | None, prompt: str, tool_calls_summary: str, final_text: str | None) -> str:
    values = {
        "rubric": rubric.strip() or "(no general rubric)",
        "case_rubric": (case_rubric or "").strip() or "(none: judge against the task itself)",
        "task": prompt.strip(),
        "tool_calls": tool_calls_summary.strip() or "(no tool calls)",
        "final_answer": (final_text or "").strip() or "(no final answer)",
    }
    body = "\n\n".join(f"<{name}>\n{values[name]}\n</{name}>" for name in SECTIONS)
    return f"{body}\n\nDoes the final answer satisfy the rubric and this case's rubric? Answer with the JSON object only."


def judge_messages(*, rubric: str, case_rubric: str | None, prompt: str, tool_calls_summary: str, final_text: str | None) -> list[dict[str, Any]]:
    user = judge_user_message(rubric=rubric, case_rubric=case_rubric, prompt=prompt, tool_calls_summary=tool_calls_summary, final_text=final_text)
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def section(text: str, name: str) -> str | None:
    """The content of `<name>...</name>` in a judge prompt, or None."""
    match = re.search(rf"<{name}>\n?(.*?)\n?</{name}>", text, re.DOTALL)
    return match.group(1) if match else None


def _json_object(text: str) -> Any:
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(text)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate.strip())
        except ValueError:
            continue
    return None


def parse_verdict(output: str | None, judge_model: str) -> JudgeVerdict:
    """The verdict in a judge's reply; an unreadable reply is a failed verdict that quotes the output."""
    data = _json_object(output or "")
    passed = data.get("pass", data.get("passed")) if isinstance(data, dict) else None
    if not isinstance(passed, bool):
        quoted = clip(redact((output or "").strip().replace("\n", " ")), MAX_QUOTED_OUTPUT)
        return JudgeVerdict(passed=False, score=None, reason=f"judge output not parseable: {quoted!r}", judge_model=judge_model)
    assert isinstance(data, dict)
    score = data.get("score")
    grade = float(score) if isinstance(score, int | float) and not isinstance(score, bool) and 0.0 <= score <= 1.0 else None
    return JudgeVerdict(passed=passed, score=grade, reason=str(data.get("reason", "")).strip(), judge_model=judge_model)
