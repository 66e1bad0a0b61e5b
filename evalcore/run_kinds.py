"""Pure logic (shared vocabulary): what kind of run a stored run is, what it may stand for, and its status in words.

Every behaviour run has one kind, fixed by the command that made it and stored with its plan
(`evalcore.behaviour.plan.RunPlan`):

    run                 `evalcore run` against a live server
    merged              `evalcore merge` of the shards of one `run --shard` plan
    compare-baseline    the baseline arm of `evalcore compare` or `evalcore perturb`
    compare-candidate   the candidate arm of `evalcore compare` (a rewritten catalog, or another server)
    perturb-arm         a perturbed arm of `evalcore perturb` (a rewritten catalog)
    replay              `run --replay-run`: a recorded server, not the live one
    draft-run           `run --include-drafts` on a golden set with draft cases: cases nobody has reviewed yet

`eligibility` is the one answer to "may this run serve the cache, be a baseline, enter drift, or stand as a
model's current state in the Matrix?". Every consumer asks it (or its kind lists, for SQL), and nothing else keeps a
list of kinds. Only `run` and `merged` runs ever can; an arm or a replay measured something else than the server as
it is (another catalog, a recording), so it must never read as the server's state. docs/metrics.md has the table,
and a test checks it against this function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

RunKind = Literal["run", "merged", "compare-baseline", "compare-candidate", "perturb-arm", "replay", "draft-run"]
RUN_KINDS: Final[tuple[RunKind, ...]] = get_args(RunKind)
# The kinds whose runs measure the server as it is, with the golden set as it is: the only ones that may stand for it.
_STANDING_KINDS: Final[frozenset[str]] = frozenset({"run", "merged"})
KIND_LABELS: Final[Mapping[str, str]] = {
    "run": "run",
    "merged": "merged shards",
    "compare-baseline": "compare: baseline arm",
    "compare-candidate": "compare: candidate arm",
    "perturb-arm": "perturb: perturbed arm",
    "replay": "replay of a recording",
    "draft-run": "run with draft cases",
}


@dataclass(frozen=True)
class RunOutcome:
    """What a stored run came to, as eligibility reads it."""

    status: str  # the effective status: running | crashed | complete | failed | cancelled
    green: bool = False  # its gate said green (`RunGate.green`)
    accepted: bool = False  # accepted as a baseline by hand (`evalcore baseline accept`)
    errored: int = 0  # attempts that errored (any kind of the taxonomy)
    unscored_cases: int = 0  # (model, case) pairs none of whose attempts was scored


@dataclass(frozen=True)
class Eligibility:
    """What a run may stand for. `reason` says why not, in words a user can act on ('' when it may)."""

    cache_source: bool
    baseline: bool
    drift: bool
    matrix_current: bool
    reason: str = ""


def eligibility(kind: str, outcome: RunOutcome) -> Eligibility:
    """The one eligibility rule (see the module docstring and docs/metrics.md's table).

    | kind                      | serves the cache | can be a baseline                           | enters drift  | Matrix current |
    | run, merged               | if complete      | if complete and green, or accepted by hand  | if complete   | yes (*)        |
    | every other kind          | no               | no                                          | no            | no             |

    (*) a run that did not finish is still the model's newest state; the Matrix says so in a banner.
    An accepted baseline must still be complete with no errored attempt: `baseline accept` refuses the rest.
    """
    if kind not in RUN_KINDS:
        return Eligibility(False, False, False, False, f"unknown run kind {kind!r} (written by a newer evalcore?)")
    if kind not in _STANDING_KINDS:
        why = f"a {KIND_LABELS[kind]} measures something other than the server as it is; it never stands for the server"
        return Eligibility(False, False, False, False, why)
    if outcome.status != "complete":
        # Still the server's newest state in the Matrix, which says the run did not finish; nothing else may read it.
        return Eligibility(False, False, False, True, f"the run is {outcome.status}, not complete")
    clean = outcome.errored == 0 and outcome.unscored_cases == 0
    baseline = clean and (outcome.green or outcome.accepted)
    why = "" if baseline else ("it has errored attempts" if not clean else "it is not green (a case gate is unmet or its gate failed)")
    return Eligibility(True, baseline, True, True, "" if baseline else f"not a baseline: {why}")


def standing_kinds() -> tuple[str, ...]:
    """The kinds that may serve the cache, be a baseline, enter drift or be the Matrix's current state (for SQL filters)."""
    return tuple(kind for kind in RUN_KINDS if eligibility(kind, RunOutcome("complete", green=True)).baseline)


# The statuses of a run that finished (its gate was stored): the ones a comparison or a drill-down can read whole.
FINISHED_STATUSES: Final = ("green", "passed, not green", "gate failed", "not green: no baseline yet", "incomplete", "not gated")
RUN_STATUSES: Final = (
    "green",
    "passed, not green",
    "gate failed",
    "not green: no baseline yet",
    "incomplete",
    "not gated",
    "running",
    "crashed",
    "failed",
    "cancelled",
)


def run_status(stored_status: str, gate: Mapping[str, Any] | None) -> str:
    """A stored run's status, in the one vocabulary the CLI, the Runs page, the Matrix banner and the report share:

        green                       complete, the gate passed and the run may be a baseline (`RunGate.green`)
        passed, not green           complete, the gate passed, but a case gate is unmet, errored attempts were
                                    accepted, or it is a kind that is never a baseline (an arm, a replay)
        gate failed                 complete, a regression against its baseline
        not green: no baseline yet  complete, nothing to compare with, and the run cannot be a baseline itself
        incomplete                  complete, but errored attempts beyond `--max-error-rate`: nothing was measured for them
        not gated                   complete, without a stored gate (a store written before gates existed)
        running | crashed | failed | cancelled   the run never finished

    Only the gate's own `green` reads green: a failure never reads better.
    """
    if stored_status != "complete":
        return stored_status
    if not isinstance(gate, Mapping):
        return "not gated"
    if gate.get("status") == "incomplete":
        return "incomplete"
    if gate.get("passed") is True:
        return "green" if gate.get("green") is True else "passed, not green"
    if gate.get("status") == "no_baseline":
        return "not green: no baseline yet"
    return "gate failed"
