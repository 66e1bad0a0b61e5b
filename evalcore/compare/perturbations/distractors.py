"""Pure logic (plus a cached read of a bundled file): the `distractors` perturbation: look-alike tools beside the server's.

For each server tool, the most similar tool of the bundled catalog
(`evalcore/compare/catalog/tools.yaml`, a few dozen tools in the style of
public MCP servers and SaaS APIs) not yet taken is listed too, at a random
place in the order. Similarity is the Jaccard index of the two tools' content
words (name and description, stemmed, stop-words dropped):

    similarity(a, b) = |words(a) ∩ words(b)| / |words(a) ∪ words(b)|

A catalog tool that shares no word, or has a name the server already uses,
is never drawn. A distractor is never executed: a call to one is a wrong
selection (`evalcore.behaviour.agent`), not a server error.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml

from evalcore.compare.perturbations import CatalogInput, perturbation
from evalcore.models.sim.text import content_terms, split_identifier
from evalcore.models.tool_format import CatalogRewrite

ID = "distractors"
CATALOG = "tools.yaml"


@functools.cache
def bundled_catalog() -> tuple[Mapping[str, Any], ...]:
    """The bundled catalog's tools, MCP-shaped: name, description, inputSchema (string properties, the first required)."""
    text = resources.files("evalcore.compare").joinpath("catalog", CATALOG).read_text(encoding="utf-8")
    tools = []
    for entry in yaml.safe_load(text)["tools"]:
        properties = {name: {"type": "string", "description": words} for name, words in entry["properties"].items()}
        schema = {"type": "object", "properties": properties, "required": list(properties)[:1]}
        tools.append({"name": entry["name"], "description": entry["description"], "inputSchema": schema})
    return tuple(tools)


def words(tool: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(content_terms(f"{split_identifier(str(tool.get('name', '')))} {tool.get('description') or ''}"))


def similarity(first: Mapping[str, Any], second: Mapping[str, Any]) -> float:
    a, b = words(first), words(second)
    return len(a & b) / len(a | b) if a | b else 0.0


@perturbation(ID, title="a look-alike tool beside each tool")
def distractors(catalog: CatalogInput) -> CatalogRewrite:
    shown = set(catalog.model_names()) | set(catalog.names)
    pool = [tool for tool in bundled_catalog() if tool["name"] not in shown]
    chosen: list[Mapping[str, Any]] = []
    for tool in catalog.tools:
        scored = [(similarity(tool, candidate), -index, candidate) for index, candidate in enumerate(pool) if candidate not in chosen]
        best = max(scored, key=lambda entry: entry[:2], default=None)
        if best is not None and best[0] > 0:
            chosen.append(best[2])
    order = catalog.model_names()
    rng = catalog.rng(ID)
    for distractor in chosen:
        order.insert(rng.randint(0, len(order)), str(distractor["name"]))
    return CatalogRewrite(distractors=tuple(chosen), order=tuple(order))
