"""Pure logic: fingerprints that tell whether a server or a golden set changed between runs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

TOOL_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def server_fingerprint(discover_result: Mapping[str, Any] | None, tools: Sequence[Mapping[str, Any]]) -> str:
    """sha256 over what a model sees of a server: discover's versions, capabilities and instructions, and each tool.

    Volatile fields (`_meta`, `ttlMs`, `cacheScope`) are left out so only a real
    change of the server's surface changes the fingerprint.
    """
    discover = discover_result or {}
    surface = {
        "supportedVersions": discover.get("supportedVersions"),
        "capabilities": discover.get("capabilities"),
        "instructions": discover.get("instructions"),
        "tools": sorted(({k: tool.get(k) for k in TOOL_FIELDS if k in tool} for tool in tools), key=lambda t: str(t.get("name"))),
    }
    return hashlib.sha256(canonical_json(surface).encode("utf-8")).hexdigest()
