"""Pure logic: the `mrtr.asked_info_correct` scorer: what the client submitted in forms is what the user knows (MRTR).

For each accepted form elicitation, each submitted field that names one of the
user's facts (case, spaces and `_`/`-` ignored) must equal that fact (compared
as text, ignoring case); a submitted field the user has no fact for was made
up. A yes/no confirmation field (a boolean whose name says confirm, approve,
proceed, agree or consent) is a decision, not information, and is skipped; any
other boolean field matches a fact that says yes or no.

    value = correct fields / submitted fields

It gates (value 1 to pass). It applies to cases with a `user:` whose attempt
submitted something in a form; otherwise not applicable.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.golden.model import GoldenCase
from evalcore.records import Score
from evalcore.redaction import clip
from evalcore.scoring.registry import AttemptInput, not_applicable, scorer
from evalcore.scoring.scorers._mrtr_inputs import asked_inputs
from evalcore.users.profile import normalise

ID = "mrtr.asked_info_correct"
_CONFIRMATIONS = ("confirm", "approve", "proceed", "agree", "consent")
_YES, _NO = frozenset({"yes", "y", "true", "1", "on"}), frozenset({"no", "n", "false", "0", "off"})


def _has_user(case: GoldenCase) -> bool:
    return case.user is not None


@scorer(ID, title="asked-for info correct", applies_to=_has_user)
def asked_info_correct(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    assert attempt.case.user is not None
    facts = {normalise(k): str(v).strip().lower() for k, v in attempt.case.user.facts.items()}
    checked = correct = 0
    wrong: list[str] = []
    for item in asked_inputs(attempt.executions):
        content = (item.answer.response.get("content") if item.answer is not None else None) or {}
        if item.request.method != "elicitation/create" or not isinstance(content, Mapping):
            continue
        for name, value in content.items():
            key = normalise(str(name))
            if isinstance(value, bool) and any(word in key for word in _CONFIRMATIONS):
                continue  # a decision, whatever the user's facts say about it
            checked += 1
            if key in facts and _same(facts[key], value):
                correct += 1
            else:
                wrong.append(f"{name}={value!r} ({'the user knows ' + repr(facts[key]) if key in facts else 'not a fact the user has'})")
    if not checked:
        return not_applicable(ID)
    reasons = (clip(f"{correct} of {checked} submitted form fields match the user's facts; wrong: {', '.join(wrong)}", 300),) if wrong else ()
    return Score(ID, round(correct / checked, 4), True, reasons)


def _same(fact: str, value: object) -> bool:
    """A submitted value equals the user's fact: as text ignoring case, or as a yes/no for a boolean field."""
    if isinstance(value, bool):
        return fact in (_YES if value else _NO)
    return fact == str(value).strip().lower()
