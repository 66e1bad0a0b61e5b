"""I/O layer: a server's tools as `tools` and `draft` read them, and one tool call whose answer a draft keeps.

    async with ToolSession(target) as session:
        tools = session.tools                      # tools/list's entries, every page
        answer = await session.call("get_weather", {"city": "Paris"})

A server that cannot be reached or does not list its tools is a `TargetError` (one line, exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from evalcore.errors import TargetError
from evalcore.mcp.client import McpClient
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits

ANNOTATION_HINTS = (("readOnlyHint", "readOnly"), ("destructiveHint", "destructive"), ("idempotentHint", "idempotent"), ("openWorldHint", "openWorld"))


@dataclass(frozen=True)
class ToolAnswer:
    """What a tools/call came to: a server error (a JSON-RPC error or no answer), a tool error (`isError`), or a result."""

    server_error: str | None  # the call failed on the wire or as a JSON-RPC error
    is_error: bool  # the tool answered isError: true
    text: str  # the result's text content (or its structured content as JSON), clipped by the caller

    @property
    def ok(self) -> bool:
        return self.server_error is None and not self.is_error


def annotations_of(tool: Mapping[str, Any]) -> dict[str, bool]:
    """The tool's behaviour hints (`readOnly`, `destructive`, `idempotent`, `openWorld`) that it declares."""
    raw = tool.get("annotations")
    raw = raw if isinstance(raw, Mapping) else {}
    return {short: bool(raw[hint]) for hint, short in ANNOTATION_HINTS if isinstance(raw.get(hint), bool)}


def is_read_only(tool: Mapping[str, Any]) -> bool:
    return annotations_of(tool).get("readOnly") is True


class ToolSession:
    """One client on the target for the duration: the tools listed on entry, calls made on demand."""

    def __init__(self, target: Target, limits: Limits | None = None) -> None:
        self.target, self.limits = target, limits or Limits()
        self.tools: list[dict[str, Any]] = []
        self._client: McpClient | None = None

    async def __aenter__(self) -> ToolSession:
        self._client = McpClient(self.target.open(self.limits), limits=self.limits)
        try:
            discover = await self._client.discover()
            if discover.failure is not None and discover.failure.kind in ("connect", "closed"):
                raise TargetError(f"cannot reach {self.target}: {discover.failure.detail}")
            listing = await self._client.list_all("tools/list")
            if listing.failed is not None:
                raise TargetError(f"{self.target} did not list its tools: {listing.failed.describe()} (run `evalcore conformance` on it)")
        except BaseException:
            await self._client.aclose()
            raise
        self.tools = [tool for tool in listing.items if isinstance(tool.get("name"), str)]
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
        assert self._client is not None
        schema = next((tool.get("inputSchema") for tool in self.tools if tool.get("name") == name), None)
        exchange = await self._client.call_tool(name, arguments, schema if isinstance(schema, Mapping) else None)
        if exchange.failure is not None:
            return ToolAnswer(exchange.describe(), False, "")
        if exchange.error is not None:
            return ToolAnswer(f"JSON-RPC error {exchange.error_code}: {exchange.error.get('message', '')}", False, "")
        result = exchange.result or {}
        return ToolAnswer(None, result.get("isError") is True, _result_text(result))


def _result_text(result: Mapping[str, Any]) -> str:
    texts = [str(item.get("text")) for item in result.get("content") or [] if isinstance(item, Mapping) and item.get("type") == "text"]
    if texts:
        return "\n".join(texts)
    structured = result.get("structuredContent")
    return json.dumps(structured, ensure_ascii=False, sort_keys=True) if structured is not None else ""
