"""Pure logic: the `sim/judge` model, a deterministic stand-in for an LLM judge.

It reads the tagged sections of the judge prompt (`evalcore.models.judge_prompt`)
and compares words, nothing more:

    overlap = |R ∩ A| / |R|

where R is the set of stemmed content words of the case rubric (or, without
one, of the task prompt), minus words that describe grading rather than
content ("answer", "mention", "user", "tool", ...), and A the same for the
final answer. It passes when overlap >= `PASS_OVERLAP` (0.5: the answer uses at
least half of the rubric's content words) and reports the overlap as the
score. No final answer fails. It is labelled simulated, like every sim/ model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.models.judge_prompt import section
from evalcore.models.sim.reply import SimReply, last_user_text, reply_tokens, request_tokens
from evalcore.models.sim.text import content_terms

JUDGE_VERSION = "judge-1"
PASS_OVERLAP = 0.5
GRADING_WORDS = frozenset(
    content_terms(
        "answer answers response responds reply assistant model user tool tools mention mentions mentioned state states include "
        "includes say says give gives correct correctly clearly explain explains report reports should must provide provides"
    )
)
_PLACEHOLDER_PREFIX = "(none"


def verdict(case_rubric: str | None, task: str, final_answer: str | None) -> dict[str, Any]:
    """`{"pass", "score", "reason"}` for this answer, by the overlap rule in the module docstring."""
    if not final_answer or final_answer.startswith("(no final answer"):
        return {"pass": False, "score": 0.0, "reason": "there is no final answer"}
    reference_text = case_rubric if case_rubric and not case_rubric.startswith(_PLACEHOLDER_PREFIX) else task
    reference = set(content_terms(reference_text)) - GRADING_WORDS
    if not reference:
        return {"pass": True, "score": 1.0, "reason": "nothing specific to check; an answer was given"}
    shared = reference & set(content_terms(final_answer))
    overlap = len(shared) / len(reference)
    passed = overlap >= PASS_OVERLAP
    words = ", ".join(sorted(shared)) or "none"
    reason = f"the answer shares {len(shared)} of {len(reference)} rubric words ({words}); {'at or above' if passed else 'below'} {PASS_OVERLAP:g}"
    return {"pass": passed, "score": round(overlap, 3), "reason": reason}


def judge_reply(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None) -> SimReply:
    prompt = last_user_text(messages)
    result = verdict(section(prompt, "case_rubric"), section(prompt, "task") or "", section(prompt, "final_answer"))
    text = json.dumps(result)
    return SimReply(text=text, input_tokens=request_tokens(messages, tools), output_tokens=reply_tokens(text, ()), model_version=JUDGE_VERSION)
