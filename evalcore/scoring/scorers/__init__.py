"""Pure logic: the registered attempt scorers, one module each (see `evalcore.scoring.registry`).

Registration order is the import order below, and scorers run in it: a scorer
sees the scores of those above it (arguments reads selection).
"""

# isort: off
from evalcore.scoring.scorers import selection, arguments, sequence, over_call, execution, judge, robustness
from evalcore.scoring.scorers import input_requests_handled, asked_info_correct, no_unnecessary_elicitation, rounds_per_call
from evalcore.scoring.scorers import state_reached, turns_to_completion, credential_leak
# isort: on

__all__ = [
    "selection",
    "arguments",
    "sequence",
    "over_call",
    "execution",
    "judge",
    "robustness",
    "input_requests_handled",
    "asked_info_correct",
    "no_unnecessary_elicitation",
    "rounds_per_call",
    "state_reached",
    "turns_to_completion",
    "credential_leak",
]
