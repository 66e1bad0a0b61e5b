"""Presentation layer: an attempt's stored transcript as a conversation a person reads, like `inspect view`. Pure: no streamlit.

The transcript keeps the messages exactly as sent to and received from the
model (OpenAI chat format) and, apart from them, each tool call as executed
on the server. `conversation` walks the messages in order and puts each tool
call's execution (latency, error, the result without its `_meta`) where the
model saw the result. A call the server answered with `input_required`
(MRTR) shows each round before its result, in order: what the server asked,
who answered (the simulated user, a model, the case, or the client) and what
was sent back. The simulated user's own messages are marked as such.
Titles are our own words; bodies are untrusted text from the model or the
server and must be rendered as text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

EntryKind = Literal["system", "user", "simulated_user", "assistant", "tool_call", "tool_result", "input_request", "error"]


@dataclass(frozen=True)
class Entry:
    """One step of a conversation: who spoke (`kind`), a title in our words, the untrusted body, and how to show it."""

    kind: EntryKind
    title: str
    body: str
    folded: bool = False  # long or secondary content (the system prompt, tool results): shown behind an expander
    failed: bool = False  # the step that went wrong: highlighted


def conversation(transcript: Mapping[str, Any]) -> list[Entry]:
    """The conversation of one attempt, in order: system, user, assistant, each tool call, its result, errors."""
    messages: Sequence[Mapping[str, Any]] = transcript.get("messages") or ()
    executions = list(transcript.get("executions") or ())
    # Tool results are matched to executions by order: executions are recorded in the order of the calls.
    entries: list[Entry] = []
    next_execution = 0
    call_names: dict[str, str] = {}
    user_turns = {int(turn["message_index"]) for turn in transcript.get("user_turns") or () if isinstance(turn, Mapping) and "message_index" in turn}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            entries.append(Entry("system", "System prompt", _text(message.get("content")), folded=True))
        elif role == "user":
            simulated = index in user_turns or bool(message.get("simulated_user") or message.get("name") == "simulated_user")
            entries.append(Entry("simulated_user" if simulated else "user", "Simulated user" if simulated else "User", _text(message.get("content"))))
        elif role == "assistant":
            if message.get("content"):
                entries.append(Entry("assistant", "Assistant", _text(message.get("content"))))
            if message.get("refusal"):  # the model declined (`message.refusal`): its answer, shown as what it is
                entries.append(Entry("assistant", "Assistant (refused)", _text(message.get("refusal"))))
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                name = str(function.get("name") or call.get("name") or "?")
                call_names[str(call.get("id"))] = name
                entries.append(Entry("tool_call", f"Tool call · {name}", _arguments(function.get("arguments", call.get("arguments")))))
        elif role == "host":  # an agent host's own word (evalcore.hosts): who it is, the cross-check, its own steps
            entries.append(Entry("system", str(message.get("title") or "Host"), _text(message.get("content")), folded=True))
        elif role == "tool":
            execution = executions[next_execution] if next_execution < len(executions) else None
            next_execution += 1
            name = call_names.get(str(message.get("tool_call_id")), str((execution or {}).get("tool") or "?"))
            entries.extend(input_rounds(execution))
            entries.append(_tool_result(name, message, execution))
    for execution in executions[next_execution:]:  # executed, but the model never saw the result (the attempt stopped)
        entries.extend(input_rounds(execution))
        entries.append(_tool_result(str(execution.get("tool") or "?"), None, execution))
    final_text = transcript.get("final_text")
    if final_text and not any(entry.kind == "assistant" and entry.body == final_text for entry in entries):
        entries.append(Entry("assistant", "Assistant (final answer)", _text(final_text)))
    if transcript.get("error"):
        entries.append(Entry("error", f"Attempt stopped: {transcript.get('stop_reason') or 'error'}", _text(transcript.get("error")), failed=True))
    return entries


_ANSWERED_BY = {"user": "the simulated user", "model": "the model", "case": "the case", "client": "the client"}


def input_rounds(execution: Mapping[str, Any] | None) -> list[Entry]:
    """One entry per input request of each MRTR round of a call, in order: what was asked, who answered, what was sent."""
    entries: list[Entry] = []
    for round_ in (execution or {}).get("rounds") or ():
        if not isinstance(round_, Mapping):
            continue
        for request in round_.get("requests") or ():
            if not isinstance(request, Mapping):
                continue
            kind = str(request.get("method") or "?") + (f" ({request['mode']})" if request.get("mode") else "")
            who = request.get("answered_by")
            answerer = f"{_ANSWERED_BY.get(str(who), str(who))} ({request.get('answerer')})" if who else "nobody"
            response = request.get("response")
            action = response.get("action") if isinstance(response, Mapping) else None
            title = f"Input request · {execution.get('tool') if execution else '?'} · round {round_.get('round')} · {kind} · answered by {answerer}"
            if action:
                title += f": {action}"
            asked = json.dumps(without_meta(request.get("params") or {}), indent=2, ensure_ascii=False)
            sent = json.dumps(response, indent=2, ensure_ascii=False) if response is not None else "(no answer)"
            body = f"asked:\n{asked}\n\nsent back:\n{sent}" + (f"\n\nnote: {request['note']}" if request.get("note") else "")
            entries.append(Entry("input_request", title, body, folded=True, failed=response is None))
    return entries


def _tool_result(name: str, message: Mapping[str, Any] | None, execution: Mapping[str, Any] | None) -> Entry:
    details = []
    failed = False
    body = _text(message.get("content")) if message is not None else ""
    if execution is not None:
        if execution.get("latency_ms") is not None:
            details.append(f"{float(execution['latency_ms']):.0f} ms")
        if execution.get("fault"):
            details.append(f"injected fault: {execution['fault']}")
        if execution.get("error"):
            failed = True
            details.append("protocol or transport error")
            body = _text(execution.get("error"))
        elif execution.get("is_error"):
            failed = True
            details.append("tool error (isError)")
        result = execution.get("result")
        if not body and isinstance(result, Mapping):
            body = json.dumps(without_meta(result), indent=2, ensure_ascii=False)
    title = f"Tool result · {name}" + (f" · {' · '.join(details)}" if details else "")
    return Entry("tool_result", title, body, folded=not failed, failed=failed)


def without_meta(value: Any) -> Any:
    """`value` with every `_meta` key left out, at any depth: protocol bookkeeping a reader does not need in each result."""
    if isinstance(value, Mapping):
        return {key: without_meta(item) for key, item in value.items() if key != "_meta"}
    if isinstance(value, list):
        return [without_meta(item) for item in value]
    return value


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(str(part.get("text", part)) if isinstance(part, Mapping) else str(part) for part in content)
    return json.dumps(content, ensure_ascii=False)


def calls_side_by_side(expected: Mapping[str, Any] | None, actual: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(expected, actual) tool calls as two texts of the same shape, one call a line: `tool {arguments}`."""
    if expected is None:
        want = "(the golden file is not readable from here)"
    elif expected.get("expect_calls"):  # calls written with their own arguments, in order or (a set) in any order
        calls = expected["expect_calls"]
        want = "\n".join(f"{call['tool']} {json.dumps(call.get('args') or {}, sort_keys=True, ensure_ascii=False)}" for call in calls)
        want += "\n(in any order)" if expected.get("expect_set") else ""
    elif expected.get("expect_set"):
        want = "\n".join(str(tool) for tool in expected["expect_set"]) + "\n(in any order)"
    elif expected.get("expect_sequence"):
        want = "\n".join(str(tool) for tool in expected["expect_sequence"])
        if expected.get("expect_args"):
            want += f"\nfirst call's arguments: {json.dumps(expected['expect_args'], sort_keys=True, ensure_ascii=False)}"
    elif expected.get("expect_tool"):
        want = f"{expected['expect_tool']} {json.dumps(expected.get('expect_args') or {}, sort_keys=True, ensure_ascii=False)}"
    else:
        want = "(no tool call: a negative case)"
    got = "\n".join(f"{call.get('name')} {json.dumps(call.get('arguments') or {}, sort_keys=True, ensure_ascii=False)}" for call in actual) or "(no tool calls)"
    return want, got
