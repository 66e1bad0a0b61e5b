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

Before the calls, the server's tool catalog (`tools/list`, every page) is
compared with the recorded one, tool by tool, on what a model sees of a tool
(`fingerprint.TOOL_FIELDS`: title, description, inputSchema, outputSchema,
annotations; the order of the list aside): a tool is `added`, `removed` or
`changed` (with the fields and paths that differ). A changed catalog is a
difference like a changed answer.

A server that cannot be reached is no answer to diff: when the first request
(the listing) finds no server (`connect`, or a stdio process that exited),
the replay stops with a `TargetError`. One that goes away mid-replay stops it
too: the call that met it is `errored` and the calls left are not sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evalcore.errors import TargetError
from evalcore.mcp.client import Exchange, McpClient
from evalcore.mcp.fingerprint import TOOL_FIELDS, canonical_json
from evalcore.mcp.mrtr import INPUT_CAPABILITIES
from evalcore.mcp.protocol.envelope import param_headers
from evalcore.mcp.protocol.tracecontext import conversation_trace
from evalcore.mcp.recording import ServerTarget
from evalcore.mcp.transport.base import Limits
from evalcore.records import RecordedExchange, published
from evalcore.redaction import CUT_MARK, clip

CallVerdict = Literal["same", "changed", "errored"]
ToolChangeKind = Literal["added", "removed", "changed"]
MAX_DIFFERENCES = 5  # differing paths listed per call; the JSON report has both answers whole
MAX_TOOL_PAGES = 50  # tools/list pages read before the listing is taken as it is
GONE = ("connect", "closed")  # failures that say no server is there any more: nothing further can be answered
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
class ToolChange:
    """One tool whose definition differs between the recorded catalog and the server's now."""

    name: str
    change: ToolChangeKind
    fields: tuple[str, ...] = ()  # for `changed`: which of TOOL_FIELDS differ
    differences: tuple[str, ...] = ()  # for `changed`: `path: recorded -> now`, as for a call
    recorded: Mapping[str, Any] | None = None  # the tool as recorded (TOOL_FIELDS), None when added
    now: Mapping[str, Any] | None = None  # the tool as listed now, None when removed

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "change": self.change,
            "fields": list(self.fields),
            "differences": list(self.differences),
            "recorded": self.recorded,
            "now": self.now,
        }


@dataclass(frozen=True)
class CatalogComparison:
    """The recorded `tools/list` catalog against the server's now: `same`, `changed` (per tool) or `errored` (none now)."""

    verdict: CallVerdict
    recorded_tools: int
    tools_now: int | None  # None when no catalog came back now
    changes: tuple[ToolChange, ...] = ()
    failure: str | None = None  # why no catalog came back now

    def count(self, change: ToolChangeKind) -> int:
        return sum(tool.change == change for tool in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "recordedTools": self.recorded_tools,
            "toolsNow": self.tools_now,
            "changes": [tool.to_json() for tool in self.changes],
            "failure": self.failure,
        }


@dataclass(frozen=True)
class ReplayCallsReport:
    """Every recorded call of a run sent to a server, and how its answers and its tool catalog compare."""

    run_id: str
    target: str
    calls: tuple[CallComparison, ...]
    catalog: CatalogComparison | None = None  # None: the recording holds no tools/list answer to compare with
    not_sent: int = 0  # recorded calls left unsent because the server went away
    stopped: str | None = None  # why the replay stopped before its last call

    def count(self, verdict: CallVerdict) -> int:
        return sum(call.verdict == verdict for call in self.calls)

    @property
    def identical(self) -> bool:
        """Every call answered exactly as recorded (no call changed, none errored, none unsent), and the catalog the same."""
        catalog_same = self.catalog is None or self.catalog.verdict == "same"
        return catalog_same and not self.not_sent and all(call.verdict == "same" for call in self.calls)

    def to_json(self) -> dict[str, Any]:
        """The `--json` document, published (no secret evalcore knows leaves in it)."""
        return published(
            {
                "schemaVersion": 1,
                "runId": self.run_id,
                "target": self.target,
                "identical": self.identical,
                "counts": {verdict: self.count(verdict) for verdict in ("same", "changed", "errored")},
                "catalog": self.catalog.to_json() if self.catalog is not None else None,
                "notSent": self.not_sent,
                "stopped": self.stopped,
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
    elif canonical_json(recorded) != canonical_json(now) or (recorded is _MISSING) != (now is _MISSING):
        before, after = _shown(recorded), _shown(now)
        if before == after and isinstance(recorded, str) and isinstance(now, str):
            # Two long texts that differ past the cut (a sentence added to a description): show them from there.
            start = max(0, next(i for i, (a, b) in enumerate(zip(recorded + "\0", now + "\0", strict=False)) if a != b) - 20)
            before, after = CUT_MARK + _shown(recorded[start:]), CUT_MARK + _shown(now[start:])
        found.append(f"{path or '(answer)'}: {before} -> {after}")


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


def recorded_catalog(exchanges: Sequence[RecordedExchange]) -> list[dict[str, Any]] | None:
    """The tools of the run's last recorded listing (its pages joined), or None when the recording holds no listing."""
    catalog: list[dict[str, Any]] | None = None
    for exchange in sorted(exchanges, key=lambda e: e.sequence):
        result = (exchange.answer or {}).get("result") if exchange.method == "tools/list" else None
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            page = [tool for tool in result["tools"] if isinstance(tool, dict)]
            catalog = [*catalog, *page] if catalog is not None and exchange.params.get("cursor") else page
    return catalog


def compare_catalogs(recorded: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> CatalogComparison:
    """Pure: each tool added, removed or changed between two catalogs, matched by name, on what a model sees of it
    (`TOOL_FIELDS`); the order of the list aside."""
    before, after = _by_name(recorded), _by_name(now)
    changes: list[ToolChange] = []
    for name in sorted(before.keys() | after.keys()):
        recorded_tool, listed = before.get(name), after.get(name)
        if listed is None:
            changes.append(ToolChange(name, "removed", recorded=recorded_tool))
        elif recorded_tool is None:
            changes.append(ToolChange(name, "added", now=listed))
        elif canonical_json(recorded_tool) != canonical_json(listed):
            fields = tuple(f for f in TOOL_FIELDS if _field(recorded_tool, f) != _field(listed, f))
            changes.append(ToolChange(name, "changed", fields, tuple(json_differences(recorded_tool, listed)), recorded_tool, listed))
    return CatalogComparison("changed" if changes else "same", len(before), len(after), tuple(changes))


def _by_name(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(tool.get("name")): {k: tool[k] for k in TOOL_FIELDS if k in tool} for tool in tools}


def _field(tool: Mapping[str, Any], name: str) -> str | None:
    return canonical_json(tool[name]) if name in tool else None


def _gone(exchange: Exchange) -> bool:
    """Whether no server was there to answer (none to connect to, or its process exited)."""
    return exchange.failure is not None and exchange.failure.kind in GONE


async def replay_calls(run_id: str, exchanges: Sequence[RecordedExchange], target: ServerTarget, limits: Limits | None = None) -> ReplayCallsReport:
    """Compare the server's tool catalog with the recorded one, then send every recorded `tools/call` of `exchanges`
    to `target`, conversation by conversation, and compare the answers. A server that cannot be reached raises
    `TargetError`."""
    limits = limits or Limits()
    conversations: dict[object, list[RecordedExchange]] = {}
    for exchange in sorted(exchanges, key=lambda e: e.sequence):
        if exchange.method == "tools/call":
            conversations.setdefault(exchange.conversation or ("alone", exchange.sequence), []).append(exchange)
    # The capabilities a behaviour run declares: a server asks for input only from a client that can answer.
    client = McpClient(target.open(limits), limits=limits, client_capabilities=INPUT_CAPABILITIES)
    compared: list[CallComparison] = []
    stopped: str | None = None
    try:
        tools_now, listing_failure = await _list_tools(client, target)
        before = recorded_catalog(exchanges)
        catalog = None if before is None else _catalog_verdict(before, tools_now, listing_failure)
        # The headers a call mirrors from its arguments follow the server's schemas now, the recorded ones otherwise.
        schemas = {**_input_schemas(before or []), **_input_schemas(tools_now or [])}
        for calls in conversations.values():
            if stopped is not None:
                break
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
                    if answer is None and _gone(sent):
                        stopped = f"the server could not be reached from call #{call.sequence} on ({failure})"
                        break
    finally:
        await client.aclose()
    not_sent = sum(len(calls) for calls in conversations.values()) - len(compared)
    return ReplayCallsReport(run_id, str(target), tuple(sorted(compared, key=lambda c: c.sequence)), catalog, not_sent, stopped)


async def _list_tools(client: McpClient, target: ServerTarget) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The server's tools now (every page), or None and why none came; no server there at all raises `TargetError`."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for page in range(MAX_TOOL_PAGES):
        exchange = await client.request("tools/list", {"cursor": cursor} if cursor else None)
        if page == 0 and _gone(exchange) and exchange.failure is not None:
            raise TargetError(f"cannot reach the server {target}: {exchange.failure.detail}")
        result = exchange.result
        if result is None or not isinstance(result.get("tools"), list):
            return None, exchange.describe()
        tools.extend(tool for tool in result["tools"] if isinstance(tool, dict))
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return tools, None


def _catalog_verdict(before: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]] | None, failure: str | None) -> CatalogComparison:
    if now is None:
        return CatalogComparison("errored", len(_by_name(before)), None, (), f"no catalog now: {failure}")
    return compare_catalogs(before, now)


def _input_schemas(tools: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each tool's inputSchema, for the headers an HTTP call mirrors from its arguments."""
    return {str(tool.get("name")): tool["inputSchema"] for tool in tools if isinstance(tool.get("inputSchema"), dict)}


def render_replay_calls(report: ReplayCallsReport) -> str:
    """The terminal text: the catalog's verdict and each tool that differs, one line per call (verdict, tool,
    arguments) with its differences under it, then the counts."""
    lines = [f"Replaying the {len(report.calls) + report.not_sent} recorded tool call(s) of run {report.run_id} on {report.target}", ""]
    lines.extend(_catalog_lines(report.catalog))
    for call in report.calls:
        lines.append(f"  #{call.sequence:<5} {call.verdict:<8} {call.tool} {clip(json.dumps(dict(call.arguments), sort_keys=True), 100)}")
        lines.extend(f"           {difference}" for difference in call.differences)
    if report.stopped is not None:
        lines.append(f"  {report.stopped}: {report.not_sent} recorded call(s) not sent")
    lines.append("")
    counts = f"{report.count('same')} same, {report.count('changed')} changed, {report.count('errored')} errored"
    counts += f", {report.not_sent} not sent" if report.not_sent else ""
    catalog = report.catalog.verdict if report.catalog is not None else "not recorded"
    answers_differ = bool(report.not_sent) or any(call.verdict != "same" for call in report.calls)
    catalog_differs = report.catalog is not None and report.catalog.verdict != "same"
    differ = {(True, False): "answers differ", (False, True): "tool catalog differs"}.get((answers_differ, catalog_differs), "answers and tool catalog differ")
    verdict = "every answer and the tool catalog are identical to the recording" if report.identical else f"the server's {differ} from the recording"
    if not report.calls and not report.not_sent:
        verdict = "the run recorded no tool call: nothing to compare"
    lines.append(f"{counts}; tool catalog {catalog}: {verdict}")
    return published("\n".join(lines))


def _catalog_lines(catalog: CatalogComparison | None) -> list[str]:
    """The catalog's verdict in one line, then each tool added, removed or changed (its differing paths under it)."""
    if catalog is None:
        return ["tools/list: the recording holds no catalog; it was not compared", ""]
    if catalog.verdict == "errored":
        return [f"tools/list: errored: {catalog.failure}", ""]
    if catalog.verdict == "same":
        return [f"tools/list: same ({catalog.recorded_tools} tool(s), each as recorded)", ""]
    counts = ", ".join(f"{catalog.count(change)} {change}" for change in ("changed", "removed", "added") if catalog.count(change))
    lines = [f"tools/list: changed ({counts}; {catalog.recorded_tools} tool(s) recorded, {catalog.tools_now} now)"]
    for tool in catalog.changes:
        fields = f": {', '.join(tool.fields)}" if tool.fields else ""
        lines.append(f"  {tool.change:<8} {tool.name}{fields}")
        lines.extend(f"           {difference}" for difference in tool.differences)
    return [*lines, ""]
