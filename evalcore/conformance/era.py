"""Orchestration support: which era a server speaks, found from what it does (spec basic/versioning.mdx).

Two probes, made once per suite before any check runs:
- modern: `server/discover` as a 2026-07-28 client sends it. A result, or a
  recognised modern error (-32020, -32021, -32022), means the server speaks a
  modern version.
- legacy: `initialize` as a legacy client sends it (no `_meta`; on HTTP no
  `MCP-Protocol-Version` header), with protocolVersion 2025-11-25 and then
  2025-03-26. An `InitializeResult` means the server still serves legacy
  clients. On HTTP a session the server minted for it is ended with DELETE at
  once; on stdio the probe runs in a second process of the same command
  (an `initialize` selects legacy semantics for the whole process), which is
  closed after it.

modern + legacy is dual-era, modern alone modern-only, legacy alone
legacy-only. A server that answers neither is reported as such and judged as
modern-only, since that is what it claims by being tested.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcore import __version__
from evalcore.conformance.registry import Era
from evalcore.mcp.client import Exchange, McpClient
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.transport.base import Limits, Transport, WireFailure, WireResponse
from evalcore.mcp.transport.stdio import StdioTransport
from evalcore.redaction import clip

LEGACY_PROBE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-03-26")
# Versions from before 2025-06-18, which had no MCP-Protocol-Version header: a
# server serving their clients MAY read a request without the header as 2025-03-26.
HEADERLESS_VERSIONS: frozenset[str] = frozenset({"2024-11-05", "2025-03-26"})
MODERN_ERROR_CODES: frozenset[int] = frozenset({c.HEADER_MISMATCH, c.MISSING_REQUIRED_CLIENT_CAPABILITY, c.UNSUPPORTED_PROTOCOL_VERSION})
# After a legacy answer on stdio, how long server/discover may still take before the
# server is taken as legacy-only (a legacy server may never answer it): both processes
# started together, so the main one gets as long again as the probe process took, plus this.
STDIO_DISCOVER_GRACE_S = 2.0


@dataclass(frozen=True)
class LegacyProbe:
    """One legacy `initialize` and what came of it."""

    requested: str
    accepted: str | None  # the protocolVersion the server's InitializeResult reported
    server_info: str | None
    session_id: str | None  # HTTP: the Mcp-Session-Id it minted
    session_closed: str | None  # HTTP: what the DELETE of that session got
    answer: str  # one line: what came back
    refusal: str = ""  # the whole error (message and data) when refused, for checks that read it

    def describe(self) -> str:
        if self.accepted is None:
            return f"initialize {self.requested}: refused ({self.answer})"
        text = f"initialize {self.requested}: protocolVersion {self.accepted}"
        if self.server_info:
            text += f", serverInfo {self.server_info}"
        if self.session_id is not None:
            text += f"; its session was deleted ({self.session_closed})"
        return text


@dataclass(frozen=True)
class EraProfile:
    """What the server speaks, and the evidence."""

    era: Era
    determined: bool  # False when the server answered neither probe
    discover: Exchange
    legacy: tuple[LegacyProbe, ...]

    @property
    def legacy_versions(self) -> list[str]:
        return sorted({probe.accepted for probe in self.legacy if probe.accepted}, reverse=True)

    @property
    def modern_versions(self) -> list[str]:
        versions = (self.discover.result or {}).get("supportedVersions")
        return [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []

    @property
    def accepts_headerless_clients(self) -> bool:
        """Whether the server serves clients older than 2025-06-18 (which send no MCP-Protocol-Version)."""
        return bool(HEADERLESS_VERSIONS.intersection(self.legacy_versions) or HEADERLESS_VERSIONS.intersection(self.modern_versions))

    def summary(self) -> str:
        """One line for the report's head."""
        if not self.determined:
            return f"era: not determined (server/discover: {self.discover.describe()}; {'; '.join(p.describe() for p in self.legacy)}), judged as modern-only"
        parts = []
        if self.era != "legacy-only":
            parts.append(f"server/discover lists {', '.join(self.modern_versions) or 'no versions'}")
        if self.legacy_versions:
            parts.append(f"legacy initialize accepted ({', '.join(self.legacy_versions)})")
        elif self.era == "modern-only":
            parts.append("legacy initialize refused")
        return f"era: {self.era} ({'; '.join(parts)})"

    def legacy_verdict(self) -> str:
        """The one-line verdict a legacy-only server gets instead of the checks."""
        versions = ", ".join(self.legacy_versions)
        reported = "; ".join(probe.describe() for probe in self.legacy if probe.accepted)
        return f"speaks {versions} only: 2026-07-28 conformance does not apply ({reported}; server/discover: {self.discover.describe()})"


def is_modern_answer(exchange: Exchange) -> bool:
    """A DiscoverResult, or a recognised modern JSON-RPC error (spec: stdio / HTTP "Backward Compatibility")."""
    return exchange.result is not None or exchange.error_code in MODERN_ERROR_CODES


def initialize_message(version: str, request_id: str) -> dict[str, Any]:
    client_info = {"name": "evalcore-era-probe", "version": __version__}
    return {
        "jsonrpc": c.JSONRPC_VERSION,
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": client_info},
    }


def _refusal(wire: WireResponse) -> str:
    error = (wire.response or {}).get("error")
    if isinstance(error, dict):
        return f"{error.get('message', '')} {json.dumps(error.get('data'))}"
    return clip(wire.body.decode("utf-8", "replace"), 2000)


def _legacy_probe(version: str, wire: WireResponse) -> tuple[str | None, str | None, str]:
    """(accepted version, server info, one-line answer) from the wire answer to a legacy initialize."""
    response = wire.response or {}
    result = response.get("result")
    if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
        info = result.get("serverInfo")
        name = f"{info.get('name', '')} {info.get('version', '')}".strip() if isinstance(info, dict) else None
        return result["protocolVersion"], name or None, "InitializeResult"
    status = f"HTTP {wire.status} " if wire.status is not None else ""
    error = response.get("error")
    if isinstance(error, dict):
        return None, None, f"{status}error {error.get('code')} {clip(str(error.get('message', '')), 80)!r}"
    return None, None, status + (str(wire.failure) if wire.failure else "no JSON-RPC answer")


async def _http_legacy_probe(transport: Transport, version: str, index: int) -> LegacyProbe:
    request_id = f"evalcore-era-probe-{index}"
    body = json.dumps(initialize_message(version, request_id)).encode()
    headers = {"Content-Type": c.CONTENT_TYPE_JSON, "Accept": c.ACCEPT_BOTH}
    wire = await transport.send(body, headers=headers, expect_id=request_id)
    accepted, info, answer = _legacy_probe(version, wire)
    session = wire.headers.get(c.HEADER_SESSION_ID.lower())
    closed = None
    if session is not None:
        # Leave nothing behind: end the session the probe made the server mint.
        delete_headers = {c.HEADER_SESSION_ID: session, c.HEADER_PROTOCOL_VERSION: accepted or version}
        deleted = await transport.send(b"", headers=delete_headers, expect_id=None, http_method="DELETE")
        closed = f"HTTP {deleted.status}" if deleted.status is not None else str(deleted.failure)
    return LegacyProbe(version, accepted, info, session, closed, answer, _refusal(wire))


async def _stdio_legacy_probes(transport: StdioTransport, limits: Limits) -> tuple[LegacyProbe, ...]:
    """Legacy initializes in a second process of the same command, closed afterwards."""
    probe_process = StdioTransport(transport.argv, limits, env=transport.env)
    probes: list[LegacyProbe] = []
    try:
        for index, version in enumerate(LEGACY_PROBE_VERSIONS):
            request_id = f"evalcore-era-probe-{index}"
            wire = await probe_process.send(json.dumps(initialize_message(version, request_id)).encode(), headers={}, expect_id=request_id)
            accepted, info, answer = _legacy_probe(version, wire)
            probes.append(LegacyProbe(version, accepted, info, None, None, answer, _refusal(wire)))
            if accepted is not None or wire.failure is not None:
                break  # one stdio process holds one handshake; a dead one answers nothing more
    finally:
        await probe_process.aclose()
    return tuple(probes)


def _classify(discover: Exchange, legacy: tuple[LegacyProbe, ...]) -> EraProfile:
    modern = is_modern_answer(discover)
    speaks_legacy = any(probe.accepted for probe in legacy)
    if modern and speaks_legacy:
        return EraProfile("dual-era", True, discover, legacy)
    if speaks_legacy:
        return EraProfile("legacy-only", True, discover, legacy)
    return EraProfile("modern-only", modern, discover, legacy)


async def detect_era(client: McpClient, limits: Limits) -> EraProfile:
    """Probe the server's era (see the module docstring); `discover` is the first modern request of the suite."""
    transport = client.transport
    if isinstance(transport, StdioTransport):
        return await _detect_stdio(client, transport, limits)
    discover = await client.request("server/discover")
    legacy: list[LegacyProbe] = []
    if discover.failure is None or discover.failure.kind not in ("connect", "closed"):
        for index, version in enumerate(LEGACY_PROBE_VERSIONS):
            probe = await _http_legacy_probe(transport, version, index)
            legacy.append(probe)
            if probe.accepted is not None and not is_modern_answer(discover):
                break  # legacy-only: one handshake is evidence enough, and the verdict is due fast
            if discover.failure is not None and discover.failure.kind == "timeout" and probe.accepted is None:
                break  # answering nothing at all: one more timeout is evidence enough
    return _classify(discover, tuple(legacy))


async def _detect_stdio(client: McpClient, transport: StdioTransport, limits: Limits) -> EraProfile:
    await transport.start()  # a command that cannot start is a TargetError here, before any probe
    discover_task = asyncio.create_task(client.request("server/discover"))
    probing_since = time.perf_counter()
    legacy = await _stdio_legacy_probes(transport, limits)
    if any(probe.accepted for probe in legacy) and not discover_task.done():
        grace = min(limits.read_timeout + limits.startup_timeout, time.perf_counter() - probing_since + STDIO_DISCOVER_GRACE_S)
        await asyncio.wait({discover_task}, timeout=grace)
        if not discover_task.done():
            discover_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await discover_task
            detail = f"no answer within {grace:.1f}s, while a second process of the same command answered initialize"
            silent = WireResponse(None, {}, b"", (), None, WireFailure("timeout", detail), 0.0)
            return _classify(Exchange("server/discover", None, {}, "POST", silent), legacy)
    return _classify(await discover_task, legacy)


def header_map(exchange: Exchange) -> Mapping[str, str]:
    return {name.lower(): value for name, value in exchange.request_headers.items()}


def is_modern_request(exchange: Exchange, *, http: bool = True) -> bool:
    """Whether the request went out as a 2026-07-28 client sends it: `_meta` (and on HTTP the version header) 2026-07-28.

    A deliberately legacy-shaped request (no version header, an older one,
    GET, DELETE) is old-client traffic, which a dual-era server may serve the
    legacy way (sessions included).
    """
    if exchange.http_method != "POST" or exchange.request is None:
        return False
    params = exchange.request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    body_version = meta.get(c.META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if body_version != c.PROTOCOL_VERSION:
        return False
    return not http or header_map(exchange).get(c.HEADER_PROTOCOL_VERSION.lower()) == c.PROTOCOL_VERSION
