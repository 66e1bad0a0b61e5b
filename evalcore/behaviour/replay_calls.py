"""Orchestration: send a stored run's recorded tool calls to a server (a new version of it) and diff the answers.

No model takes part: each recorded `tools/call` request is sent again exactly
as recorded (its params, `_meta` aside), and the new answer is compared with
the recorded one. The calls of one recorded conversation (one attempt: one
trace id) are sent in their recorded order inside one new trace, so a server
that keeps per-conversation state sees the same sequence it saw then;
conversations go one after another.

The diff rule is exact: an answer is `same` only when its JSON (the whole
`result`, or the whole JSON-RPC `error`) equals the recorded one, keys in any
order; every other difference, a varying field included, is `changed`, and
its differing paths are listed. One field is left out: the `requestState` of
an `input_required` result, a token the server mints afresh for each request
and the client only echoes. A recorded retry that echoed one gets the token
the server minted now for the same round instead (so a multi-round call is
replayed round by round). A call the new server gave no usable answer to
(a timeout, a crash, a transport failure) is `errored`: what it would have
answered is unknown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evalcore.mcp.client import McpClient
from evalcore.mcp.fingerprint import canonical_json
from evalcore.mcp.mrtr import INPUT_CAPABILITIES
from evalcore.mcp.protocol.envelope import param_headers
from evalcore.mcp.protocol.tracecontext import conversation_trace
from evalcore.mcp.recording import ServerTarget
from evalcore.mcp.transport.base import Limits
from evalcore.records import RecordedExchange, published
from evalcore.redaction import clip

CallVerdict = Literal["same", "changed", "errored"]
MAX_DIFFERENCES = 5  # differing paths listed per call; the JSON report has both answers whole
_MISSING = object()


@dataclass(frozen=True)
class CallComparison:
    """One recorded tool call sent again: what was recorded, what came back now, and the verdict."""

    sequence: int  # the call's place in the recorded run
    tool: str
    arguments: Mapping[str, Any]
    verdict: CallVerdict
    differences: tuple[str, ...]  # `path: recorded -> now`, at most MAX_DIFFERENCES (and a count of the rest)
    recorded: Mapping[str, Any] | None  # {"result": ...} / {"error": ...}, None when no answer was recorded
    replayed: Mapping[str, Any] | None
    recorded_failure: str | None = None
    replayed_failure: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "sequence": self.sequence,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "verdict": self.verdict,
            "differences": list(self.differences),
            "recorded": self.recorded,
            "replayed": self.replayed,
            "recordedFailure": self.recorded_failure,
            "replayedFailure": self.replayed_failure,
        }


@dataclass(frozen=True)
class ReplayCallsReport:
    """Every recorded call of a run sent to a server, and how its answers compare."""

    run_id: str
    target: str
    calls: tuple[CallComparison, ...]

    def count(self, verdict: CallVerdict) -> int:
        return sum(call.verdict == verdict for call in self.calls)

    @property
    def identical(self) -> bool:
        """Every call answered exactly as recorded (no call changed, none errored)."""
        return all(call.verdict == "same" for call in self.calls)

    def to_json(self) -> dict[str, Any]:
        """The `--json` document, published (no secret evalcore knows leaves in it)."""
        return published(
            {
                "schemaVersion": 1,
                "runId": self.run_id,
                "target": self.target,
                "identical": self.identical,
                "counts": {verdict: self.count(verdict) for verdict in ("same", "changed", "errored")},
                "calls": [call.to_json() for call in self.calls],
            }
        )


def json_differences(recorded: object, now: object, path: str = "", limit: int = MAX_DIFFERENCES) -> list[str]:
    """The paths at which two JSON values differ, each `path: recorded -> now` (values clipped), in document order."""
    found: list[str] = []
    _walk(recorded, now, path, found)
    if len(found) > limit:
        return [*found[:limit], f"... and {len(found) - limit} more difference(s)"]
    return found


def _walk(recorded: object, now: object, path: str, found: list[str]) -> None:
    if isinstance(recorded, dict) and isinstance(now, dict):
        for key in [*recorded, *(k for k in now if k not in recorded)]:
            _walk(recorded.get(key, _MISSING), now.get(key, _MISSING), f"{path}.{key}" if path else str(key), found)
    elif isinstance(recorded, list) and isinstance(now, list) and len(recorded) == len(now):
        for index, (left, right) in enumerate(zip(recorded, now, strict=True)):
            _walk(left, right, f"{path}[{index}]", found)
    elif _shown(recorded) != _shown(now):
        found.append(f"{path or '(answer)'}: {_shown(recorded)} -> {_shown(now)}")


def _shown(value: object) -> str:
    return "(absent)" if value is _MISSING else clip(canonical_json(value), 80)


def comparable(answer: Mapping[str, Any]) -> dict[str, Any]:
    """An answer as the diff sees it: whole, but the `requestState` an `input_required` result mints afresh each time."""
    result = answer.get("result")
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        return {**answer, "result": {k: v for k, v in result.items() if k != "requestState"}}
    return dict(answer)


def minted_state(answer: Mapping[str, Any] | None) -> str | None:
    """The `requestState` an `input_required` answer carries (None for any other answer)."""
    result = (answer or {}).get("result")
    state = result.get("requestState") if isinstance(result, dict) and result.get("resultType") == "input_required" else None
    return state if isinstance(state, str) else None


def compare_call(recorded: RecordedExchange, answer: Mapping[str, Any] | None, failure: str | None) -> CallComparison:
    """Pure: the verdict on one call sent again, given the answer (or the failure) it got now."""
    tool, arguments = str(recorded.params.get("name")), recorded.params.get("arguments")
    arguments = arguments if isinstance(arguments, dict) else {}
    if answer is None:
        verdict: CallVerdict = "errored"
        differences: tuple[str, ...] = (f"no answer now: {failure or 'none came back'}",)
    elif recorded.answer is None:
        verdict, differences = "changed", (f"recorded no answer ({recorded.failure}); now an answer",)
    elif canonical_json(comparable(recorded.answer)) == canonical_json(comparable(answer)):
        verdict, differences = "same", ()
    else:
        verdict, differences = "changed", tuple(json_differences(comparable(recorded.answer), comparable(answer)))
    return CallComparison(recorded.sequence, tool, arguments, verdict, differences, recorded.answer, answer, recorded.failure, failure)


async def replay_calls(run_id: str, exchanges: Sequence[RecordedExchange], target: ServerTarget, limits: Limits | None = None) -> ReplayCallsReport:
    """Send every recorded `tools/call` of `exchanges` to `target`, conversation by conversation, and compare the answers."""
    limits = limits or Limits()
    schemas = _input_schemas(exchanges)
    conversations: dict[object, list[RecordedExchange]] = {}
    for exchange in sorted(exchanges, key=lambda e: e.sequence):
        if exchange.method == "tools/call":
            conversations.setdefault(exchange.conversation or ("alone", exchange.sequence), []).append(exchange)
    # The capabilities a behaviour run declares: a server asks for input only from a client that can answer.
    client = McpClient(target.open(limits), limits=limits, client_capabilities=INPUT_CAPABILITIES)
    compared: list[CallComparison] = []
    try:
        for calls in conversations.values():
            states: dict[str, str] = {}  # a recorded requestState -> the one the server minted now for the same round
            with conversation_trace():
                for call in calls:
                    params = dict(call.params)
                    if isinstance(params.get("requestState"), str) and params["requestState"] in states:
                        params["requestState"] = states[params["requestState"]]
                    arguments = params.get("arguments")
                    schema = schemas.get(str(params.get("name")))
                    headers = param_headers(schema, dict(arguments)) if client.transport.kind == "http" and isinstance(arguments, dict) else {}
                    sent = await client.request("tools/call", params, headers=headers or None)
                    answer = {"result": sent.result} if sent.result is not None else {"error": sent.error} if sent.error else None
                    failure = None if answer is not None else (str(sent.failure) if sent.failure else sent.describe())
                    recorded_state, state_now = minted_state(call.answer), minted_state(answer)
                    if recorded_state is not None and state_now is not None:
                        states[recorded_state] = state_now
                    compared.append(compare_call(call, answer, failure))
    finally:
        await client.aclose()
    return ReplayCallsReport(run_id, str(target), tuple(sorted(compared, key=lambda c: c.sequence)))


def _input_schemas(exchanges: Sequence[RecordedExchange]) -> dict[str, Mapping[str, Any]]:
    """Each recorded tool's inputSchema (the last listing wins), for the headers an HTTP call mirrors from its arguments."""
    schemas: dict[str, Mapping[str, Any]] = {}
    for exchange in exchanges:
        tools = ((exchange.answer or {}).get("result") or {}).get("tools") if exchange.method == "tools/list" else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
                schemas[str(tool.get("name"))] = tool["inputSchema"]
    return schemas


def render_replay_calls(report: ReplayCallsReport) -> str:
    """The terminal text: one line per call (verdict, tool, arguments), its differences under it, then the counts."""
    lines = [f"Replaying the {len(report.calls)} recorded tool call(s) of run {report.run_id} on {report.target}", ""]
    for call in report.calls:
        lines.append(f"  #{call.sequence:<5} {call.verdict:<8} {call.tool} {clip(json.dumps(dict(call.arguments), sort_keys=True), 100)}")
        lines.extend(f"           {difference}" for difference in call.differences)
    lines.append("")
    counts = f"{report.count('same')} same, {report.count('changed')} changed, {report.count('errored')} errored"
    verdict = "every answer is identical to the recording" if report.identical else "the server's answers differ from the recording"
    lines.append(f"{counts}: {verdict}" if report.calls else "the run recorded no tool call: nothing to compare")
    return published("\n".join(lines))
