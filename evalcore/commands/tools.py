"""Command: `evalcore tools` — list a server's tools: name, title, description, parameters and behaviour hints.

evalcore tools --server reference            # a table per tool
evalcore tools --url URL --json               # tools/list's entries, with their hints read out
evalcore tools --stdio CMD --yaml > set.yaml  # a golden-file skeleton: one case per tool, to fill in
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from evalcore.commands.options import target_from_args, target_options
from evalcore.errors import ConfigError

NAME = "tools"
SUMMARY = "list a server's tools with their parameters and hints (or a golden-file skeleton)"
ORDER = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target_options(parser, reference="start the bundled reference server on 127.0.0.1 and list its tools")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print the tools as JSON (name, title, description, parameters, annotations)")
    shape.add_argument("--yaml", action="store_true", help="print a golden-file skeleton: one case per tool and a negative case, to fill in")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds allowed for each answer (default 10)")


def command(args: argparse.Namespace) -> int:
    import asyncio

    from evalcore.behaviour.server_tools import ToolSession
    from evalcore.mcp.transport.base import Limits

    chosen = target_from_args(args)
    if not chosen.given:
        raise ConfigError("tools: one of the arguments --url --stdio --server --reference is required (see --help)")
    limits = Limits(connect_timeout=min(5.0, args.timeout), read_timeout=args.timeout)

    async def read(target: Any) -> list[dict[str, Any]]:
        async with ToolSession(target, limits) as session:
            return session.tools

    with chosen.resolve() as target:
        tools = asyncio.run(read(target))
        label = str(target)
    if args.json:
        print(json.dumps([tool_summary(tool) for tool in tools], indent=2, ensure_ascii=False))
    elif args.yaml:
        from evalcore.golden.skeleton import render_yaml, skeleton_document

        header = f"Golden-set skeleton for {label} ({len(tools)} tools): write each prompt as a user would,\n"
        header += "check the arguments, then: evalcore run --golden THIS_FILE"
        print(render_yaml(skeleton_document(tools, server=chosen.server), header), end="")
    else:
        print(render_tools(tools, label))
    return 0


def tool_summary(tool: Mapping[str, Any]) -> dict[str, Any]:
    """What `--json` prints for one tool: its listing's fields, and its hints read out (`readOnly`, `destructive`...)."""
    from evalcore.behaviour.server_tools import annotations_of

    return {
        "name": tool.get("name"),
        "title": tool.get("title") or (tool.get("annotations") or {}).get("title"),
        "description": tool.get("description"),
        "parameters": tool.get("inputSchema") or {},
        "annotations": annotations_of(tool),
    }


def render_tools(tools: list[dict[str, Any]], label: str) -> str:
    lines = [f"{label}: {len(tools)} tool{'s' if len(tools) != 1 else ''}"]
    for tool in tools:
        summary = tool_summary(tool)
        hints = ", ".join(f"{name}" if value else f"not {name}" for name, value in summary["annotations"].items()) or "no hints"
        title = f" ({summary['title']})" if summary["title"] else ""
        lines += ["", f"{summary['name']}{title}  [{hints}]"]
        for text_line in str(summary["description"] or "(no description)").strip().splitlines():
            lines.append(f"  {text_line}".rstrip())
        schema = summary["parameters"]
        properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
        required = set(schema.get("required") or [])
        if not properties:
            lines.append("  parameters: none")
        for name, prop in properties.items():
            prop = prop if isinstance(prop, Mapping) else {}
            variants = [str(v["type"]) for v in prop.get("anyOf") or [] if isinstance(v, Mapping) and isinstance(v.get("type"), str)]
            kind = prop.get("type") or ("enum" if "enum" in prop else " or ".join(variants) or "any")
            extra = f" one of {', '.join(map(str, prop['enum']))}" if isinstance(prop.get("enum"), list) else ""
            description = f": {prop['description']}" if prop.get("description") else ""
            lines.append(f"  - {name} ({kind}, {'required' if name in required else 'optional'}{extra}){description}")
    return "\n".join(lines)
