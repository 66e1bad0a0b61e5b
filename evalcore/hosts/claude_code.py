"""Pure logic: Claude Code as a host, its command line for one attempt and what its event stream says.

    claude -p PROMPT --output-format stream-json --verbose --model MODEL
           --strict-mcp-config --mcp-config <attempt>/mcp.json        only the server under test (the tap's URL)
           --tools ""                                                 no built-in tool: no shell, no file tools
           --allowedTools mcp__target                                 the server's tools run without a prompt
           --permission-prompts none                                  anything that would prompt is denied at once
           --setting-sources "" --no-session-persistence --disable-slash-commands
           --max-turns N [--append-system-prompt CASE_SYSTEM]

Environment: `CLAUDE_CONFIG_DIR` and `HOME` an empty folder of the attempt's, `ANTHROPIC_BASE_URL` the endpoint
(the sim's, or `--api-base`), the key `ANTHROPIC_API_KEY` from evalcore's environment (a sim model needs none),
and Claude Code's switches for its update check, telemetry and error reports off.

What Claude Code cannot switch off: its own system prompt and its tool-search/deferral machinery (with no built-in
tools it lists the server's tools directly); a denied permission shows in its result's `permission_denials`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.hosts.report import HostReport, StreamCall, host_step
from evalcore.models.sim.host_wires import mcp_tool_name

SERVER_NAME = "target"
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}
KEY_VARIABLE = "ANTHROPIC_API_KEY"


@dataclass(frozen=True)
class HostCommand:
    argv: tuple[str, ...]
    env: dict[str, str]


def command(
    binary: Path,
    *,
    home: Path,
    mcp_url: str,
    model: str,
    base_url: str | None,
    key: str | None,
    prompt: str,
    system: str,
    max_turns: int,
    base_env: Mapping[str, str],
) -> HostCommand:
    """The attempt's command line and environment; writes the strict MCP config into `home`."""
    config = home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {SERVER_NAME: {"type": "http", "url": mcp_url}}}), encoding="utf-8")
    argv = [
        str(binary), "-p", prompt, "--output-format", "stream-json", "--verbose", "--model", model,
        "--strict-mcp-config", "--mcp-config", str(config), "--tools", "", "--allowedTools", f"mcp__{SERVER_NAME}",
        "--permission-prompts", "none", "--setting-sources", "", "--no-session-persistence", "--disable-slash-commands",
        "--max-turns", str(max_turns),
    ]  # fmt: skip
    if system.strip():
        argv += ["--append-system-prompt", system]
    env = {**base_env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home), **QUIET}
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    if key:
        env[KEY_VARIABLE] = key
    return HostCommand(tuple(argv), env)


def parse(lines: Sequence[str]) -> HostReport:
    """The stream-json events as a `HostReport`: MCP calls in order, the final text, usage, cost, turns, denials."""
    calls: list[StreamCall] = []
    events: list[Mapping[str, Any]] = []
    result: Mapping[str, Any] | None = None
    init: Mapping[str, Any] = {}
    model: str | None = None
    host_steps = 0
    host_calls: dict[str, str] = {}
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            init = event
        elif kind == "assistant":
            message = event.get("message") or {}
            model = str(message.get("model") or model or "") or None
            text = "\n".join(str(b.get("text")) for b in message.get("content") or () if isinstance(b, dict) and b.get("type") == "text")
            tool_calls = []
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    given = block.get("input")
                    arguments = given if isinstance(given, dict) else {}
                    name = mcp_tool_name(str(block.get("name", "")), SERVER_NAME)
                    if name is None:  # the host's own step (tool search, a built-in tool): shown, never scored
                        host_steps += 1
                        host_calls[str(block.get("id"))] = str(block.get("name"))
                        events.append(host_step(f"Host step · {block.get('name')}", arguments))
                        continue
                    calls.append(StreamCall(str(block.get("id")), name, arguments))
                    tool_calls.append({"id": str(block.get("id")), "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}})
            if text or tool_calls:
                events.append({"role": "assistant", "content": text or None, **({"tool_calls": tool_calls} if tool_calls else {})})
        elif kind == "user":
            for block in (event.get("message") or {}).get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    called = str(block.get("tool_use_id"))
                    if called in host_calls:
                        events.append(host_step(f"Host step · {host_calls[called]} · result", block.get("content")))
                    else:
                        events.append({"role": "tool", "tool_call_id": called, "content": block.get("content")})
        elif kind == "result":
            result = event
    servers = {str(s.get("name")): str(s.get("status")) for s in init.get("mcp_servers") or () if isinstance(s, dict)}
    if result is None:
        return HostReport(tuple(calls), None, None, None, None, None, model, (), servers.get(SERVER_NAME), "no result event", tuple(events), host_steps)
    usage = result.get("usage") or {}
    denials = tuple(str(d.get("tool_name", d)) if isinstance(d, dict) else str(d) for d in result.get("permission_denials") or ())
    error = None
    if result.get("is_error") or result.get("subtype") != "success":
        error = f"{result.get('subtype')}: {str(result.get('result') or result.get('errors') or '')[:300]}".rstrip(": ")
    return HostReport(
        calls=tuple(calls),
        final_text=str(result.get("result")) if result.get("result") is not None and error is None else None,
        input_tokens=_int(usage.get("input_tokens")),
        output_tokens=_int(usage.get("output_tokens")),
        cost_usd=float(result["total_cost_usd"]) if isinstance(result.get("total_cost_usd"), int | float) else None,
        turns=_int(result.get("num_turns")),
        model=model,
        denials=denials,
        server_status=servers.get(SERVER_NAME),
        error=error,
        events=tuple(events),
        host_steps=host_steps,
        step_limit=result.get("subtype") == "error_max_turns",
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
