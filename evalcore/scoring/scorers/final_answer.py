"""Pure logic: the `final_answer` scorer: did the attempt end with an answer (Layer 1).

An agent that loops until the step limit, or ends with empty text, has not
done the task, whatever its calls were (`evalcore.taxonomy.no_final_answer`).
Value 0 then, with the reason ("step limit reached after 8 model turns ...");
it gates, so such an attempt never passes. Not applicable when the model never
got to answer (the server failed first).
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.records import Score
from evalcore.scoring.registry import AttemptInput, always, not_applicable, scorer, verdict_score
from evalcore.taxonomy import no_final_answer

ID = "final_answer"


@scorer(ID, title="final answer given", metric="final_answer_rate", applies_to=always)
def final_answer(attempt: AttemptInput, earlier: Mapping[str, Score]) -> Score:
    if attempt.stop_reason not in ("final", "step_limit"):
        return not_applicable(ID)
    missing = no_final_answer(attempt.stop_reason, attempt.final_text, attempt.model_turns)
    return verdict_score(ID, missing is None, [missing] if missing else [])
