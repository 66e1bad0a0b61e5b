"""Pure logic: the `mrtr.input_requests_handled` scorer: every input request the server sent was answered (MRTR).

    value = answered requests / (requests asked + calls that ended on an unanswered input_required: loop, malformed)

It gates: the attempt passes only with value 1 and every `expect_input_requests.must`
pattern matched by a request the server asked. It applies when the server asked
for input or the case expects it to (a `must` pattern); otherwise not applicable.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.records import Score
from evalcore.redaction import clip
from evalcore.scoring.registry import AttemptInput, always, not_applicable, scorer
from evalcore.scoring.scorers._mrtr_inputs import MRTR_ERRORS, asked_inputs

ID = "mrtr.input_requests_handled"


@scorer(ID, title="input requests handled", applies_to=always)
def input_requests_handled(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    asked = list(asked_inputs(attempt.executions))
    failed_calls = [e for e in attempt.executions if e.error_type in MRTR_ERRORS]
    must = attempt.case.expect_input_requests.must if attempt.case.expect_input_requests else ()
    if not asked and not failed_calls and not must:
        return not_applicable(ID)
    answered = sum(1 for item in asked if item.answer is not None)
    # An unanswerable request is among `asked` already (without an answer); a loop or a malformed request ends
    # the call on an input_required that was never answered: one more request not handled.
    total = len(asked) + sum(1 for e in failed_calls if e.error_type != "mrtr_unanswered")
    value = answered / total if total else 1.0
    missing = [p.describe() for p in must if not any(p.matches(i.tool, i.request.method, i.request.elicitation_mode) for i in asked)]
    reasons = [f"expected the server to ask for {', '.join(missing)}, but it never did"] if missing else []
    reasons += [clip(f"{e.call.name}: {e.error}", 300) for e in failed_calls]
    if value < 1.0 and not failed_calls:
        reasons.append(f"{answered} of {total} input requests answered")
    # A missing `must` request fails the verdict even when everything that was asked got an answer.
    return Score(ID, 0.0 if missing else round(value, 4), True, tuple(reasons))
