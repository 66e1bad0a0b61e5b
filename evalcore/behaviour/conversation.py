"""Orchestration: the participants of a multi-turn attempt, and the state read after it.

`attempt_participants` builds who answers the server's input requests for a
case (its simulated user, its sampling model or the model under test, its
roots). `read_state` runs a case's `expect_state` reads on the server after
the conversation (in the same trace, so a server that keeps per-conversation
state answers for this attempt) and judges each with `state_verdict`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.behaviour.inputs import AttemptResponder
from evalcore.errors import GoldenSetError
from evalcore.golden.conversation import MISSING_VALUE, StateCheck, select, subset_mismatch
from evalcore.golden.model import GoldenCase, GoldenSet
from evalcore.mcp.client import Exchange, McpClient
from evalcore.models.adapter import ModelCaller
from evalcore.models.types import ModelSpec
from evalcore.records import StateReading
from evalcore.redaction import clip
from evalcore.users.profile import default_profile
from evalcore.users.simulated import SimulatedUser

MAX_SHOWN_VALUE = 500


def attempt_participants(case: GoldenCase, model: ModelSpec, models: ModelCaller, context: Mapping[str, Any]) -> tuple[AttemptResponder, SimulatedUser | None]:
    """The responder for the server's input requests, and the user who writes follow-ups (None without `user:`)."""
    # The user and the sampling model go where the model under test goes (its `--api-base`), sim/ models nowhere.
    user = SimulatedUser(case.user or default_profile(case.prompt), models, context=context, api_base=model.api_base)
    sampling = at_endpoint(case.sampling_model, model.api_base) if case.sampling_model else model
    responder = AttemptResponder(user=user, sampling_model=sampling, models=models, roots=case.roots, context=context)
    return responder, (user if case.user is not None else None)


def at_endpoint(name: str, api_base: str | None) -> ModelSpec:
    return ModelSpec(name, api_base=None if name.startswith("sim/") else api_base)


def case_models(case: GoldenCase) -> tuple[str, ...]:
    """The model strings a case calls besides the model under test: its simulated user's (a scripted one calls none)
    and its sampling model's."""
    user = (case.user.model,) if case.user is not None and not case.user.simulated_by_script else ()
    return user + ((case.sampling_model,) if case.sampling_model else ())


def check_state_tools(golden: GoldenSet, tools: Sequence[Mapping[str, Any]]) -> None:
    """Every `expect_state` tool must be one the server marks read-only: a state check must not change the state."""
    read_only = {str(t.get("name")) for t in tools if isinstance(t.get("annotations"), dict) and t["annotations"].get("readOnlyHint") is True}
    problems = [
        f'{golden.path}:{case.line}: case "{case.id}": expect_state reads with {check.tool}, which the server does not mark '
        "readOnlyHint: true; read the state with a read-only tool or a resource"
        for case in golden.cases
        for check in case.expect_state
        if check.tool is not None and check.tool not in read_only
    ]
    if problems:
        raise GoldenSetError("\n".join(problems))


async def read_state(client: McpClient, checks: Sequence[StateCheck]) -> tuple[StateReading, ...]:
    readings = []
    for check in checks:
        if check.tool is not None:
            exchange = await client.call_tool(check.tool, check.arguments)
        else:
            exchange = await client.request("resources/read", {"uri": check.resource})
        readings.append(state_verdict(check, exchange.result, _failure(exchange)))
    return tuple(readings)


def _failure(exchange: Exchange) -> str | None:
    result = exchange.result
    if result is None:
        return exchange.describe()
    if result.get("resultType") == "input_required":
        return "the read answered input_required; a state read must not need input"
    if result.get("isError") is True:
        return "the read returned isError"
    return None


def state_verdict(check: StateCheck, result: Mapping[str, Any] | None, failure: str | None) -> StateReading:
    """Pure: whether the read's result holds the expected value at the check's path (equality, or subset for `subset:`)."""
    target = check.describe()
    if failure is not None or result is None:
        return StateReading(target, False, None, f"{target}: {failure or 'no result'}")
    actual = select(result, check.path)
    if actual is MISSING_VALUE:
        return StateReading(target, False, None, f"{target}: the path is not in the result")
    shown = actual if len(repr(actual)) <= MAX_SHOWN_VALUE else clip(repr(actual), MAX_SHOWN_VALUE)
    if check.has_equals:
        if actual == check.equals:
            return StateReading(target, True, shown, f"{target} is {check.equals!r}")
        return StateReading(target, False, shown, f"{target}: expected {check.equals!r}, got {clip(repr(actual), 120)}")
    mismatch = subset_mismatch(check.subset, actual, check.path)
    if mismatch is None:
        return StateReading(target, True, shown, f"{target} contains the expected values")
    return StateReading(target, False, shown, f"{target}: {mismatch}")
