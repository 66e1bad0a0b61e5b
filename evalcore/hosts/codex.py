"""Pure logic: Codex as a host, its per-attempt config and command line, and what its `--json` event stream says.

    CODEX_HOME=<attempt>/home  codex exec --json --skip-git-repo-check --ephemeral --ignore-rules PROMPT

`<attempt>/home/config.toml` names only the server under test (`[mcp_servers.target]`, the tap's URL), the model
and, with an endpoint, a provider `evalcore` (`wire_api = "responses"`, `base_url` the sim's or `--api-base`, its
key read from `OPENAI_API_KEY`), `approval_policy = "never"` (nothing waits for an approval) and
`sandbox_mode = "read-only"`.

What Codex cannot switch off here: its shell tool (`exec_command`, confined to the read-only sandbox in an empty
working folder), its MCP resource tools and its plan/goal tools; its own system prompt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.hosts.claude_code import HostCommand
from evalcore.hosts.report import HostReport, StreamCall

SERVER_NAME = "target"
KEY_VARIABLE = "OPENAI_API_KEY"


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def config_toml(*, mcp_url: str, model: str, base_url: str | None, system: str) -> str:
    lines = [f"model = {_toml(model)}", 'approval_policy = "never"', 'sandbox_mode = "read-only"', "check_for_update_on_startup = false"]
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
                arguments = item.get("arguments")
                calls.append(StreamCall(str(item.get("id")), str(item.get("tool")), arguments if isinstance(arguments, dict) else {}))
                events.append({"role": "assistant", "content": [{"type": "mcp_tool_call", "tool": item.get("tool"), "arguments": arguments}]})
                events.append({"role": "tool", "content": item.get("result") or item.get("error")})
            elif item_type == "agent_message":
                final = str(item.get("text") or "")
                events.append({"role": "assistant", "content": final})
            elif item_type in ("command_execution", "file_change", "web_search", "todo_list"):
                host_steps += 1
                events.append({"role": "host", "content": item})
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
