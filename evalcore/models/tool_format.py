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
tool under another description (or none), or another name, while its calls
still go to the real tool: the name map carries the rename back. A
`CatalogRewrite` (`evalcore perturb`) is the whole of what the model sees
changed: the overrides, distractor tools listed beside the server's (never
executed: a call to one is the model's wrong choice), and the order.
"""

from __future__ import annotations

import copy
import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
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
    remove_description: bool = False  # show the tool with no description at all


@dataclass(frozen=True)
class CatalogRewrite:
    """Everything the model sees changed of a server's tool listing; the calls still go to the real tools.

    `distractors` are MCP-shaped tools (name, description, inputSchema) listed to the model and never sent to the
    server. `order` lists model-side names in the order they are offered; names it leaves out follow, as listed.
    """

    tools: Mapping[str, ToolOverride] = field(default_factory=dict)  # by MCP tool name
    distractors: tuple[Mapping[str, Any], ...] = ()
    order: tuple[str, ...] = ()

    @property
    def distractor_names(self) -> frozenset[str]:
        return frozenset(str(tool.get("name", "")) for tool in self.distractors)

    def to_json(self) -> dict[str, Any]:
        """What the rewrite changed, for the stored run's config and the reports (only what it sets)."""
        data: dict[str, Any] = {}
        if self.tools:
            data["tools"] = {name: {k: v for k, v in asdict(o).items() if v not in (None, False)} for name, o in self.tools.items()}
        if self.distractors:
            data["distractors"] = [{"name": t.get("name"), "description": t.get("description")} for t in self.distractors]
        if self.order:
            data["order"] = list(self.order)
        return data


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


def to_openai_tools(mcp_tools: Sequence[Mapping[str, Any]], rewrite: CatalogRewrite | None = None) -> tuple[list[dict[str, Any]], ToolNameMap]:
    """`[{"type": "function", "function": {name, description, parameters}}]` and the name map.

    A tool without an `inputSchema` (the spec requires one) gets `{"type": "object"}`.
    `rewrite` changes what the model sees: a tool's description or name, distractor tools beside the server's, the
    order. ValueError for a distractor whose name a server tool (or another distractor) already shows.
    """
    rewrite = rewrite or CatalogRewrite()
    overrides = rewrite.tools
    name_map = with_overrides(assign_model_names([str(tool.get("name", "")) for tool in mcp_tools]), overrides)
    converted: list[dict[str, Any]] = []
    for tool in mcp_tools:
        mcp_name = str(tool.get("name", ""))
        override = overrides.get(mcp_name)
        function: dict[str, Any] = {"name": name_map.to_model(mcp_name)}
        if override is not None and override.remove_description:
            pass
        elif override is not None and override.description is not None:
            function["description"] = override.description
        elif tool.get("description") is not None:
            function["description"] = str(tool["description"])
        function["parameters"] = _parameters(tool)
        converted.append({"type": "function", "function": function})
    shown = {entry["function"]["name"] for entry in converted} | set(name_map.mcp_by_model)
    for distractor in rewrite.distractors:
        name = str(distractor.get("name", ""))
        if not MODEL_NAME_PATTERN.match(name) or name in shown:
            raise ValueError(f"distractor {name!r} is not a model tool name, or a tool the model sees already has it")
        shown.add(name)
        function = {"name": name, "description": str(distractor.get("description") or ""), "parameters": _parameters(distractor)}
        converted.append({"type": "function", "function": function})
    if rewrite.order:
        rank = {name: index for index, name in enumerate(rewrite.order)}
        converted.sort(key=lambda entry: rank.get(entry["function"]["name"], len(rank)))  # stable: the rest keep their places
    return converted, name_map


def _parameters(tool: Mapping[str, Any]) -> dict[str, Any]:
    schema = tool.get("inputSchema")
    return copy.deepcopy(dict(schema)) if isinstance(schema, Mapping) else {"type": "object"}
