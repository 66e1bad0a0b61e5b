"""Pure logic: the `mrtr.no_unnecessary_elicitation` scorer: the server asked only for what it needed (MRTR).

An input request is unnecessary when it matches an `expect_input_requests.must_not`
pattern, or when it is a form elicitation all of whose requested fields are
already arguments of the call with those names (the server asked for what it
was given).

    value = unnecessary requests (a count; lower is better)

It gates (value 0 to pass). It applies when the server asked for input or the
case forbids some (a `must_not` pattern); otherwise not applicable.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.records import Score
from evalcore.redaction import clip
from evalcore.scoring.registry import AttemptInput, always, not_applicable, scorer
from evalcore.scoring.scorers._mrtr_inputs import AskedInput, asked_inputs

ID = "mrtr.no_unnecessary_elicitation"


@scorer(ID, title="no unnecessary input requests", applies_to=always, direction="lower")
def no_unnecessary_elicitation(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    asked = list(asked_inputs(attempt.executions))
    must_not = attempt.case.expect_input_requests.must_not if attempt.case.expect_input_requests else ()
    if not asked and not must_not:
        return not_applicable(ID)
    unnecessary: list[str] = []
    for item in asked:
        forbidden = next((p for p in must_not if p.matches(item.tool, item.request.method, item.request.elicitation_mode)), None)
        if forbidden is not None:
            unnecessary.append(f"{item.tool} asked for {forbidden.describe()}, which this case must not trigger")
        elif _already_given(item):
            unnecessary.append(f"{item.tool} asked for {', '.join(_fields(item))}, which the call already gave")
    return Score(ID, float(len(unnecessary)), True, tuple(clip(reason, 300) for reason in unnecessary))


def _fields(item: AskedInput) -> list[str]:
    schema = item.request.params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return [str(name) for name in properties] if isinstance(properties, Mapping) else []


def _already_given(item: AskedInput) -> bool:
    if item.request.method != "elicitation/create" or item.request.elicitation_mode != "form":
        return False
    fields = _fields(item)
    return bool(fields) and all(field in item.arguments for field in fields)
