"""Pure logic: MCP tools (from tools/list) as OpenAI-style function tools, with safe, reversible names.

The JSON Schema of each tool goes to the model as written (a deep copy, key
order kept, `$defs`/`$ref` untouched): rewriting it would test our rewriting,
not the server. Only the name may change, because providers accept function
names matching `^[a-zA-Z0-9_-]{1,64}$` and MCP allows more (dots, slashes,
unicode, any length). A name that fits is kept; one that does not is
transliterated (NFKD, accents dropped), has other characters replaced by `_`,
and gets an 8-hex sha256 suffix when it was truncated or collides with
another tool's name. `ToolNameMap` maps both ways.

A `ToolOverride` (`evalcore compare --candidate-tools`) shows the model a
tool under another description, or another name, while its calls still go to
the real tool: the name map carries the rename back.
"""

from __future__ import annotations

import copy
import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MODEL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_NAME_LENGTH = 64
_HASH_LENGTH = 8
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True)
class ToolNameMap:
    """MCP tool name <-> the name the model sees. Names not in the map map to themselves."""

    model_by_mcp: Mapping[str, str] = field(default_factory=dict)
    mcp_by_model: Mapping[str, str] = field(default_factory=dict)

    def to_model(self, mcp_name: str) -> str:
        return self.model_by_mcp.get(mcp_name, mcp_name)

    def to_mcp(self, model_name: str) -> str:
        """The MCP name for a model's tool call; an unknown name stays as is, so the scorer sees an unknown tool."""
        return self.mcp_by_model.get(model_name, model_name)

    @property
    def renamed(self) -> dict[str, str]:
        """The MCP names that had to change, with the name the model sees."""
        return {mcp: model for mcp, model in self.model_by_mcp.items() if mcp != model}


@dataclass(frozen=True)
class ToolOverride:
    """What the model sees of one server tool instead of what the server lists: a description, a name, or both."""

    description: str | None = None
    name: str | None = None  # must match MODEL_NAME_PATTERN and differ from every other tool's model-side name


def _short_hash(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:_HASH_LENGTH]


def _with_suffix(stem: str, name: str) -> str:
    return f"{stem[: MAX_NAME_LENGTH - _HASH_LENGTH - 1]}_{_short_hash(name)}"


def _sanitised(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return _UNSAFE.sub("_", ascii_name)


def assign_model_names(mcp_names: Sequence[str]) -> ToolNameMap:
    """Safe, unique model-side names for `mcp_names`; names that already fit keep priority and never change."""
    taken = {name for name in mcp_names if MODEL_NAME_PATTERN.match(name)}
    model_by_mcp: dict[str, str] = {name: name for name in mcp_names if name in taken}
    for name in mcp_names:
        if name in model_by_mcp:
            continue
        candidate = _sanitised(name)
        if not re.search(r"[A-Za-z0-9]", candidate):
            candidate = _with_suffix("tool", name)
        elif len(candidate) > MAX_NAME_LENGTH or candidate in taken:
            candidate = _with_suffix(candidate, name)
        counter = 2
        while candidate in taken:  # a hash collision: only theoretical, but the map must stay one-to-one
            candidate = _with_suffix(f"{candidate[: MAX_NAME_LENGTH - _HASH_LENGTH - 4]}{counter}", name)
            counter += 1
        taken.add(candidate)
        model_by_mcp[name] = candidate
    return ToolNameMap(model_by_mcp=model_by_mcp, mcp_by_model={model: mcp for mcp, model in model_by_mcp.items()})


def with_overrides(name_map: ToolNameMap, overrides: Mapping[str, ToolOverride]) -> ToolNameMap:
    """`name_map` with the overrides' new names; ValueError for a name a model cannot take, or one another tool has."""
    renames = {mcp: override.name for mcp, override in overrides.items() if override.name is not None}
    if not renames:
        return name_map
    model_by_mcp = {**name_map.model_by_mcp, **renames}
    for mcp, model in renames.items():
        if not MODEL_NAME_PATTERN.match(model):
            raise ValueError(f"tool {mcp}: the new name {model!r} must be 1-64 letters, digits, '_' or '-'")
        clash = sorted(other for other, seen in model_by_mcp.items() if seen == model and other != mcp)
        if clash:
            raise ValueError(f"tool {mcp}: the new name {model!r} is also the name the model sees for {clash[0]}")
    mcp_by_model = {model: mcp for mcp, model in model_by_mcp.items()}
    for mcp in renames:
        old_name = name_map.to_model(mcp)
        # The model was never offered the old name: a call to it is a call to an unknown tool, not to the real one.
        mcp_by_model.setdefault(old_name, f"{old_name} (renamed to {renames[mcp]}; not offered)")
    return ToolNameMap(model_by_mcp=model_by_mcp, mcp_by_model=mcp_by_model)


def to_openai_tools(mcp_tools: Sequence[Mapping[str, Any]], overrides: Mapping[str, ToolOverride] | None = None) -> tuple[list[dict[str, Any]], ToolNameMap]:
    """`[{"type": "function", "function": {name, description, parameters}}]` and the name map.

    A tool without an `inputSchema` (the spec requires one) gets `{"type": "object"}`.
    `overrides` (by MCP tool name) replace what the model sees of a tool: its description, its name.
    """
    overrides = overrides or {}
    name_map = with_overrides(assign_model_names([str(tool.get("name", "")) for tool in mcp_tools]), overrides)
    converted: list[dict[str, Any]] = []
    for tool in mcp_tools:
        schema = tool.get("inputSchema")
        mcp_name = str(tool.get("name", ""))
        function: dict[str, Any] = {"name": name_map.to_model(mcp_name)}
        override = overrides.get(mcp_name)
        if override is not None and override.description is not None:
            function["description"] = override.description
        elif tool.get("description") is not None:
            function["description"] = str(tool["description"])
        function["parameters"] = copy.deepcopy(dict(schema)) if isinstance(schema, Mapping) else {"type": "object"}
        converted.append({"type": "function", "function": function})
    return converted, name_map
