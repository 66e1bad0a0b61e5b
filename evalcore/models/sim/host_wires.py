"""Pure logic: the sim policies behind the wires agent hosts speak, Anthropic Messages (Claude Code) and OpenAI
Responses (Codex).

A host sends its whole conversation on every request, in its own wire's shape, with its own tools beside the MCP
server's (named `mcp__<server>__<tool>` by Claude Code, `mcp__<server>__<tool>` or `<server>__<tool>` by Codex).
Here a request becomes the OpenAI-shaped conversation the sim policies read (`evalcore.models.sim.catalog.sim_reply`):

- only the MCP server's tools are offered to the policy, under their MCP names, so the lexical baseline ranks the
  server's tools and a script names them as it does for a raw model;
- the host's own steps (a built-in tool's call and its result, `<system-reminder>` blocks, thinking) are left out,
  so a script's turn k is still its k-th MCP call;
- the policy's calls go back under the host's names for them.

The reply is then written in the wire's shape: a list of server-sent events (streaming) or one JSON body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.models.sim.reply import SimReply, call_id

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_MCP_NAME = re.compile(r"^mcp__(?P<server>.+?)__(?P<tool>.+)$")


@dataclass(frozen=True)
class PolicyInput:
    """What a sim policy reads: the OpenAI-shaped conversation and tools, and how to name its calls on the wire."""

    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]
    wire_names: Mapping[str, str]  # MCP tool name -> the host's name for it


def mcp_tool_name(wire_name: str, server: str) -> str | None:
    """The MCP name of a host's tool name for `server`'s tool (`mcp__server__tool` or `server__tool`); None for a host's own tool."""
    match = _MCP_NAME.match(wire_name)
    if match is not None:
        return match["tool"] if match["server"] == server else None
    prefix = f"{server}__"
    return wire_name[len(prefix) :] if wire_name.startswith(prefix) else None


def _function(name: str, description: Any, parameters: Any) -> dict[str, Any]:
    schema = parameters if isinstance(parameters, Mapping) else {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": name, "description": str(description or ""), "parameters": dict(schema)}}


def _without_reminders(text: str) -> str:
    return _REMINDER.sub("", text).strip()


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return _without_reminders(content)
    if isinstance(content, list):
        parts = [str(block.get("text", "")) for block in content if isinstance(block, Mapping) and block.get("type") in ("text", "input_text", "output_text")]
        return "\n".join(part for part in (_without_reminders(p) for p in parts) if part)
    return ""


# Anthropic Messages (Claude Code)


def anthropic_input(body: Mapping[str, Any], server: str) -> PolicyInput:
    """A Messages request as the sim policies read it (see the module docstring)."""
    wire_names: dict[str, str] = {}
    tools: list[dict[str, Any]] = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, Mapping):
            continue
        mcp = mcp_tool_name(str(tool.get("name", "")), server)
        if mcp is not None:
            wire_names[mcp] = str(tool["name"])
            tools.append(_function(mcp, tool.get("description"), tool.get("input_schema")))
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": _text_of(system)})
    mcp_ids: set[str] = set()
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        if message.get("role") == "system":  # the host's own context, sent as a message of its own: not the user's words
            messages.append({"role": "system", "content": _text_of(blocks)})
            continue
        if message.get("role") == "assistant":
            calls = []
            for block in blocks:
                if isinstance(block, Mapping) and block.get("type") == "tool_use":
                    mcp = mcp_tool_name(str(block.get("name", "")), server)
                    if mcp is not None:
                        mcp_ids.add(str(block.get("id")))
                        function = {"name": mcp, "arguments": json.dumps(block.get("input") or {})}
                        calls.append({"id": str(block.get("id")), "type": "function", "function": function})
            text = _text_of([b for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"])
            if calls or text:
                messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") == "tool_result" and str(block.get("tool_use_id")) in mcp_ids:
                messages.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id")), "content": _text_of(block.get("content"))})
        text = _text_of([b for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"])
        if text:
            messages.append({"role": "user", "content": text})
    return PolicyInput(tuple(messages), tuple(tools), wire_names)


def _anthropic_blocks(reply: SimReply, policy: PolicyInput, turn: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    for index, call in enumerate(reply.tool_calls):
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            arguments = {}
        blocks.append({"type": "tool_use", "id": f"toolu_{call_id(turn, index)}", "name": policy.wire_names.get(call.name, call.name), "input": arguments})
    return blocks


def anthropic_message(reply: SimReply, policy: PolicyInput, model: str, turn: int) -> dict[str, Any]:
    """The non-streaming Messages response."""
    return {
        "id": f"msg_sim_{turn}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_blocks(reply, policy, turn),
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def anthropic_events(reply: SimReply, policy: PolicyInput, model: str, turn: int) -> list[tuple[str, dict[str, Any]]]:
    """The streaming Messages response: (event name, data) in order, as Anthropic's server-sent events carry them."""
    message = anthropic_message(reply, policy, model, turn)
    start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": reply.input_tokens, "output_tokens": 0}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": reply.output_tokens}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# OpenAI Responses (Codex)


def responses_input(body: Mapping[str, Any], server: str) -> PolicyInput:
    """A Responses request as the sim policies read it (see the module docstring)."""
    wire_names: dict[str, str] = {}
    tools: list[dict[str, Any]] = []
    for tool in _responses_tools(body.get("tools") or (), server):
        mcp = mcp_tool_name(str(tool.get("name", "")), server)
        if mcp is not None:
            wire_names[mcp] = str(tool["name"])
            tools.append(_function(mcp, tool.get("description"), tool.get("parameters")))
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": str(body["instructions"])})
    mcp_ids: set[str] = set()
    items = body.get("input")
    for item in items if isinstance(items, list) else [{"type": "message", "role": "user", "content": str(items or "")}]:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "function_call":
            full = f"{item['namespace']}__{item.get('name')}" if item.get("namespace") else str(item.get("name", ""))
            mcp = mcp_tool_name(full, server)
            if mcp is not None:
                mcp_ids.add(str(item.get("call_id")))
                call = {"id": str(item.get("call_id")), "type": "function", "function": {"name": mcp, "arguments": str(item.get("arguments") or "{}")}}
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output" and str(item.get("call_id")) in mcp_ids:
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": str(item.get("call_id")), "content": output if isinstance(output, str) else _text_of(output)})
        elif kind == "message" and item.get("role") in ("user", "assistant"):
            text = _text_of(item.get("content"))
            if text and not _is_host_context(text):
                messages.append({"role": item["role"], "content": text})
    return PolicyInput(tuple(messages), tuple(tools), wire_names)


def _responses_tools(tools: Any, server: str) -> list[Mapping[str, Any]]:
    """The function tools of a Responses request, a namespace's (`mcp__server`) named `mcp__server__tool`."""
    found: list[Mapping[str, Any]] = []
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "function":
            found.append(tool)
        elif tool.get("type") == "namespace":
            found += [{**inner, "name": f"{tool.get('name')}__{inner.get('name')}"} for inner in tool.get("tools") or () if isinstance(inner, Mapping)]
    return found


def _namespaced(name: str) -> dict[str, str]:
    """A Responses call's name, and its namespace when the tool came from one (`mcp__server__tool`)."""
    namespace, separator, tool = name.rpartition("__")
    return {"name": tool, "namespace": namespace} if separator and namespace.startswith("mcp__") else {"name": name}


def _is_host_context(text: str) -> bool:
    """Codex's own context messages (its environment, its instructions files), which are no part of the task."""
    return text.lstrip().startswith(("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions", "<INSTRUCTIONS>"))


def responses_output(reply: SimReply, policy: PolicyInput, turn: int) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if reply.text:
        content = [{"type": "output_text", "text": reply.text, "annotations": []}]
        output.append({"type": "message", "id": f"msg_sim_{turn}", "role": "assistant", "status": "completed", "content": content})
    for index, call in enumerate(reply.tool_calls):
        name = policy.wire_names.get(call.name, call.name)
        identifier = call_id(turn, index)
        item = {"type": "function_call", "id": f"fc_{identifier}", "call_id": identifier, **_namespaced(name), "arguments": call.arguments}
        output.append({**item, "status": "completed"})
    return output


def responses_events(reply: SimReply, policy: PolicyInput, model: str, turn: int) -> list[tuple[str, dict[str, Any]]]:
    """The streaming Responses answer: (event name, data) in order."""
    response: dict[str, Any] = {"id": f"resp_sim_{turn}", "object": "response", "model": model, "status": "in_progress", "output": []}
    events: list[tuple[str, dict[str, Any]]] = [("response.created", {"type": "response.created", "response": response})]
    output = responses_output(reply, policy, turn)
    for index, item in enumerate(output):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": index, "content_index": 0, "delta": text}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
    usage = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens, "total_tokens": reply.input_tokens + reply.output_tokens}
    done = {**response, "status": "completed", "output": output, "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return events


def sse(events: Sequence[tuple[str, Mapping[str, Any]]]) -> bytes:
    """Server-sent events, one `event:` and one `data:` line each."""
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)
