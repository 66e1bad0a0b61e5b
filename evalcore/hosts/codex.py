"""Pure logic: Codex as a host, its per-attempt config and command line, and what its `--json` event stream says.

    CODEX_HOME=<attempt>/home  codex exec --json --skip-git-repo-check --ephemeral --ignore-rules PROMPT

`<attempt>/home/config.toml` names only the server under test (`[mcp_servers.target]`, the tap's URL), the model
and, with an endpoint, a provider `evalcore` (`wire_api = "responses"`, `base_url` the sim's or `--api-base`, its
key read from `OPENAI_API_KEY`), `approval_policy = "never"` (nothing waits for an approval),
`sandbox_mode = "read-only"`, `web_search = "disabled"` and Codex's own tools switched off (`SWITCHED_OFF`).

What Codex cannot switch off here: its MCP-resource tools (`list_mcp_resources`, `read_mcp_resource`, ...) and
`request_user_input` (Plan mode only); its own system prompt. The pinned Codex speaks MCP 2026-07-28 only behind
its under-development `mcp_2026_07_28` feature, which evalcore leaves as shipped (off).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.hosts.claude_code import HostCommand
from evalcore.hosts.report import HostReport, StreamCall, host_step

SERVER_NAME = "target"
# Codex's own tools switched off: the shell (and its exec sessions), sub-agents, goals, images, apps, the browser, skills.
SWITCHED_OFF = ("shell_tool", "unified_exec", "multi_agent", "goals", "view_image", "image_generation", "apps", "browser_use", "skill_search")
KEY_VARIABLE = "OPENAI_API_KEY"


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def config_toml(*, mcp_url: str, model: str, base_url: str | None, system: str) -> str:
    lines = [f"model = {_toml(model)}", 'approval_policy = "never"', 'sandbox_mode = "read-only"', 'web_search = "disabled"']
    lines.append("check_for_update_on_startup = false")
    if system.strip():
        lines.append(f"developer_instructions = {_toml(system)}")
    if base_url:
        lines.insert(1, 'model_provider = "evalcore"')
        lines += [
            "[model_providers.evalcore]",
            'name = "evalcore"',
            f"base_url = {_toml(base_url)}",
            'wire_api = "responses"',
            f"env_key = {_toml(KEY_VARIABLE)}",
            "request_max_retries = 0",
            "stream_max_retries = 0",
        ]
    lines += ["[features]", *(f"{feature} = false" for feature in SWITCHED_OFF)]
    lines += [f"[mcp_servers.{SERVER_NAME}]", f"url = {_toml(mcp_url)}"]
    return "\n".join(lines) + "\n"


def command(
    binary: Path, *, home: Path, mcp_url: str, model: str, base_url: str | None, key: str | None, prompt: str, system: str, base_env: Mapping[str, str]
) -> HostCommand:
    (home / "config.toml").write_text(config_toml(mcp_url=mcp_url, model=model, base_url=base_url, system=system), encoding="utf-8")
    argv = (str(binary), "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--ignore-rules", prompt)
    env = {**base_env, "HOME": str(home), "CODEX_HOME": str(home)}
    if key:
        env[KEY_VARIABLE] = key
    return HostCommand(argv, env)


def parse(lines: Sequence[str]) -> HostReport:
    calls: list[StreamCall] = []
    events: list[Mapping[str, Any]] = []
    final: str | None = None
    error: str | None = None
    input_tokens = output_tokens = 0
    turns = 0
    completed = False
    host_steps = 0
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        given = event.get("item")
        item: dict[str, Any] = given if isinstance(given, dict) else {}
        if kind == "item.completed":
            item_type = item.get("type")
            if item_type == "mcp_tool_call" and item.get("server") == SERVER_NAME:
                given = item.get("arguments")
                arguments = given if isinstance(given, dict) else {}
                call_id = str(item.get("id"))
                calls.append(StreamCall(call_id, str(item.get("tool")), arguments))
                function = {"name": str(item.get("tool")), "arguments": json.dumps(arguments)}
                events.append({"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": function}]})
                events.append({"role": "tool", "tool_call_id": call_id, "content": item.get("result") or item.get("error")})
            elif item_type == "agent_message":
                final = str(item.get("text") or "")
                events.append({"role": "assistant", "content": final})
            elif item_type not in (None, "reasoning", "error"):  # the host's own step (a command, a plan, a search)
                host_steps += 1
                events.append(host_step(f"Host step · {item_type}", item))
        elif kind == "turn.completed":
            completed = True
            turns += 1
            usage = event.get("usage") or {}
            input_tokens += int(usage.get("input_tokens") or 0)
            output_tokens += int(usage.get("output_tokens") or 0)
        elif kind in ("turn.failed", "error"):
            failed = event.get("error")
            detail: dict[str, Any] = failed if isinstance(failed, dict) else event
            error = str(detail.get("message") or kind)[:300]
    if not completed and error is None:
        error = "no result event"
    return HostReport(
        calls=tuple(calls),
        final_text=final if error is None else None,
        input_tokens=input_tokens if completed else None,
        output_tokens=output_tokens if completed else None,
        cost_usd=None,  # Codex reports tokens, not a price
        turns=turns or None,
        model=None,
        denials=(),
        server_status=None,
        error=error,
        events=tuple(events),
        host_steps=host_steps,
    )
