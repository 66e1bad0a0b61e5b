"""Orchestration support: the per-run context checks share (client, exchange log, memoised fetches).

Each run of the suite gets a fresh context, so the fetches a check relies on
(discover, the lists, one call per tool) are made again in every run and a
flaky server shows up as a pass rate below runs/runs.
"""

from __future__ import annotations

import secrets
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evalcore.conformance.era import EraProfile, is_modern_request
from evalcore.conformance.registry import Era
from evalcore.mcp.client import LIST_KEYS, Exchange, Listing, McpClient
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.schemas import example_arguments
from evalcore.mcp.transport.base import WireFailure, WireResponse
from evalcore.mcp.transport.http import HttpTransport

ToolPolicy = Literal["readonly", "all", "none"]
MAX_PAGES = 50
# After this many timeouts in a row the server is taken as hung for the rest of
# the run: later requests fail at once instead of each waiting out its timeout.
STALL_AFTER_TIMEOUTS = 3

LIST_CAPABILITY = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
}


@dataclass(frozen=True)
class ToolCall:
    tool: dict[str, Any]
    arguments: dict[str, Any]
    exchange: Exchange


class RunContext:
    """What one run of the suite has seen so far, and how to ask for more."""

    def __init__(
        self,
        client: McpClient,
        tool_policy: ToolPolicy = "readonly",
        profile: EraProfile | None = None,
        *,
        first_discover: Exchange | None = None,
        foreign_token: str | None = None,
    ) -> None:
        self.client = client
        self.foreign_token = foreign_token  # `--foreign-token`: a token issued for another resource (a secret)
        self.kind = client.transport.kind
        self.tool_policy = tool_policy
        self.profile = profile
        self.exchanges: list[Exchange] = []
        self._memo: dict[str, Any] = {}
        self.memo = self._memo  # for check families that memoise their own fetches per run
        self.nonce = secrets.token_hex(4)  # unique names for things that must not exist
        self._timeouts_in_a_row = 0
        if first_discover is not None:  # the era probe's discover is this run's first request
            self._memo["discover"] = self._record(first_discover)

    @property
    def era(self) -> Era:
        return self.profile.era if self.profile is not None else "modern-only"

    @property
    def is_http(self) -> bool:
        return self.kind == "http"

    async def request(self, method: str, params: Mapping[str, Any] | None = None, **options: Any) -> Exchange:
        return self._record(self._stalled(method) or await self.client.request(method, params, **options))

    async def listen(self, notifications: Mapping[str, Any]) -> Exchange:
        return self._record(self._stalled("subscriptions/listen") or await self.client.listen(notifications))

    async def notify(self, method: str, params: Mapping[str, Any] | None = None, **options: Any) -> Exchange:
        return self._record(self._stalled(method) or await self.client.notify(method, params, **options))

    async def send_raw(self, body: bytes, **options: Any) -> Exchange:
        return self._record(self._stalled(options.get("label", "raw")) or await self.client.send_raw(body, **options))

    def stray_messages(self) -> list[dict[str, Any]]:
        """What the server wrote that answers no request in flight (stdio keeps them; over HTTP every answer has its own exchange)."""
        stray = getattr(self.client.transport, "unsolicited", None)
        return stray if isinstance(stray, list) else []

    def modern_exchanges(self) -> list[Exchange]:
        """The exchanges sent as a 2026-07-28 client sends them (over stdio: all of them).

        Scans judge only these: a dual-era server may answer deliberately
        legacy-shaped traffic the legacy way.
        """
        return [e for e in self.exchanges if is_modern_request(e, http=self.is_http)]

    def _stalled(self, method: str) -> Exchange | None:
        if self._timeouts_in_a_row < STALL_AFTER_TIMEOUTS:
            return None
        failure = WireFailure("timeout", f"not sent: the server stopped answering ({STALL_AFTER_TIMEOUTS} timeouts in a row in this run)")
        return Exchange(method, None, {}, "POST", WireResponse(None, {}, b"", (), None, failure, 0.0))

    def _record(self, exchange: Exchange) -> Exchange:
        timed_out = exchange.failure is not None and exchange.failure.kind == "timeout"
        self._timeouts_in_a_row = self._timeouts_in_a_row + 1 if timed_out else 0
        self.exchanges.append(exchange)
        return exchange

    async def discover(self) -> Exchange:
        if "discover" not in self._memo:
            self._memo["discover"] = await self.request("server/discover")
        exchange: Exchange = self._memo["discover"]
        return exchange

    @property
    def sends_authorization(self) -> bool:
        """Whether the suite runs authenticated: the user gave an `Authorization` header (--header) for every request."""
        sends_header = getattr(self.client.transport, "sends_header", None)
        return bool(sends_header is not None and sends_header("Authorization"))

    async def invalid_token_probe(self) -> Exchange:
        """server/discover with a bearer token no authorization server issued (memoised per run).

        Kept out of the run's exchange log: its answer is an OAuth error, which the scans must not judge as MCP.
        """
        if "invalid_token" not in self._memo:
            token = f"Bearer evalcore-invalid-token-{self.nonce}"
            self._memo["invalid_token"] = await self.client.request("server/discover", headers={"Authorization": token})
        exchange: Exchange = self._memo["invalid_token"]
        return exchange

    async def foreign_token_probe(self) -> Exchange | None:
        """server/discover with the `--foreign-token` (one issued for another resource), memoised per run; None without one.

        Kept out of the run's exchange log, as the invalid token's probe.
        """
        if self.foreign_token is None:
            return None
        if "foreign_token" not in self._memo:
            self._memo["foreign_token"] = await self.client.request("server/discover", headers={"Authorization": f"Bearer {self.foreign_token}"})
        exchange: Exchange = self._memo["foreign_token"]
        return exchange

    async def fetch_without_credentials(self, url: str) -> Exchange | None:
        """GET `url` as a client without a token does: none of the user's headers (`--header`), under the run's limits.

        None when `url` is not an http(s) URL or the transport is not HTTP. Kept out of the run's exchange log (not MCP).
        """
        transport = self.client.transport
        if not isinstance(transport, HttpTransport) or urllib.parse.urlsplit(url).scheme.lower() not in ("http", "https"):
            return None
        anonymous = HttpTransport(transport.target, transport.limits)  # no headers: the client has no credentials yet
        try:
            return Exchange(f"GET {url}", None, {}, "GET", await anonymous.fetch(url))
        finally:
            await anonymous.aclose()

    async def capabilities(self) -> dict[str, Any]:
        result = (await self.discover()).result or {}
        capabilities = result.get("capabilities")
        return capabilities if isinstance(capabilities, dict) else {}

    async def supports(self, method: str) -> bool:
        """Whether discover advertises the capability behind a list method (tools are assumed)."""
        capability = LIST_CAPABILITY.get(method, "tools")
        return capability == "tools" or capability in await self.capabilities()

    async def listing(self, method: str, *, fresh: bool = False) -> Listing:
        """Every page of `method` (memoised per run unless `fresh`)."""
        key = f"list:{method}"
        if fresh or key not in self._memo:
            listing = await self.client.list_all(method, max_pages=MAX_PAGES, send=self.request)  # every page goes into the run's log
            if fresh:
                return listing
            self._memo[key] = listing
        cached: Listing = self._memo[key]
        return cached

    async def tools(self) -> list[dict[str, Any]]:
        return (await self.listing("tools/list")).items

    def may_call(self, tool: Mapping[str, Any]) -> bool:
        """Whether the tool policy allows calling this tool with made-up arguments.

        `readonly` calls a tool only when it says it neither changes its environment (`readOnlyHint: true`, default
        false) nor reaches an open world of external entities (`openWorldHint: false`; the schema's default is true):
        a fetch or search tool is read-only, yet calling it sends requests out to the internet.
        """
        if self.tool_policy == "all":
            return True
        annotations = tool.get("annotations")
        if self.tool_policy != "readonly" or not isinstance(annotations, dict):
            return False
        return annotations.get("readOnlyHint") is True and annotations.get("openWorldHint") is False

    async def refused_call(self) -> ToolCall | None:
        """A tools/call a correct server refuses before running the tool: no arguments, for a tool that requires some.

        Safe under every policy but `none`: the spec says servers **MUST** "Validate all tool inputs", so the tool
        never runs, and the refusal (a tool error result, or a JSON-RPC error) is still a result to judge. The first
        tool whose inputSchema lists `required` properties is used (memoised per run); None when no tool has any.
        """
        if "refused_call" not in self._memo:
            refused = None
            if self.tool_policy != "none":
                for tool in await self.tools():
                    schema = tool.get("inputSchema")
                    required = schema.get("required") if isinstance(schema, dict) else None
                    if isinstance(tool.get("name"), str) and isinstance(required, list) and required:
                        refused = ToolCall(tool, {}, await self.request("tools/call", {"name": tool["name"], "arguments": {}}))
                        break
            self._memo["refused_call"] = refused
        call: ToolCall | None = self._memo["refused_call"]
        return call

    async def tool_calls(self) -> list[ToolCall]:
        """One call per callable tool with arguments built from its inputSchema and a progress token (memoised per run)."""
        if "tool_calls" not in self._memo:
            calls = []
            for index, tool in enumerate(await self.tools()):
                if not self.may_call(tool) or not isinstance(tool.get("name"), str):
                    continue
                schema = tool.get("inputSchema")
                arguments = example_arguments(schema) if isinstance(schema, dict) else {}
                # Each call carries its own progress token, so the progress checks judge whatever progress it sends.
                meta = {**self.client.meta(), "progressToken": f"evalcore-progress-{self.nonce}-{index}"}
                exchange = await self.request("tools/call", {"name": tool["name"], "arguments": arguments}, meta=meta)
                calls.append(ToolCall(tool, arguments, exchange))
            self._memo["tool_calls"] = calls
        result: list[ToolCall] = self._memo["tool_calls"]
        return result

    async def named_target(self) -> tuple[str, dict[str, Any]] | None:
        """A side-effect-free request that carries an `Mcp-Name` (for header checks)."""
        for tool in await self.tools():
            if self.tool_policy != "none" and self.may_call(tool):
                schema = tool.get("inputSchema")
                return "tools/call", {"name": tool["name"], "arguments": example_arguments(schema) if isinstance(schema, dict) else {}}
        if await self.supports("prompts/list"):
            prompts = (await self.listing("prompts/list")).items
            if prompts:
                arguments = {a["name"]: "example" for a in prompts[0].get("arguments", []) or [] if isinstance(a, dict) and a.get("required")}
                return "prompts/get", {"name": prompts[0].get("name"), "arguments": arguments}
        if await self.supports("resources/list"):
            resources = (await self.listing("resources/list")).items
            if resources:
                return "resources/read", {"uri": resources[0].get("uri")}
        return None

    async def sample_results(self) -> list[tuple[str, Exchange]]:
        """One exchange for every kind of result the server offers: discover, lists, calls, gets, reads."""
        if "samples" not in self._memo:
            samples: list[tuple[str, Exchange]] = [("server/discover", await self.discover())]
            for method in LIST_KEYS:
                if await self.supports(method):
                    listing = await self.listing(method)
                    samples.extend((method, exchange) for exchange in listing.exchanges)
            samples.extend(("tools/call", call.exchange) for call in await self.tool_calls())
            refused = await self.refused_call()
            if refused is not None:
                samples.append(("tools/call", refused.exchange))  # a tool error result must carry resultType too
            read = await self.first_resource_read()
            if read is not None:
                samples.append(("resources/read", read))
            if await self.supports("prompts/list"):
                prompts = (await self.listing("prompts/list")).items
                if prompts and isinstance(prompts[0].get("name"), str):
                    arguments = {a["name"]: "example" for a in prompts[0].get("arguments", []) or [] if isinstance(a, dict) and a.get("required")}
                    samples.append(("prompts/get", await self.request("prompts/get", {"name": prompts[0]["name"], "arguments": arguments})))
            self._memo["samples"] = samples
        result: list[tuple[str, Exchange]] = self._memo["samples"]
        return result

    async def first_resource_read(self) -> Exchange | None:
        if "read" not in self._memo:
            exchange = None
            if await self.supports("resources/list"):
                resources = (await self.listing("resources/list")).items
                if resources and isinstance(resources[0].get("uri"), str):
                    exchange = await self.request("resources/read", {"uri": resources[0]["uri"]})
            self._memo["read"] = exchange
        read: Exchange | None = self._memo["read"]
        return read

    async def supported_versions(self) -> list[str]:
        versions = ((await self.discover()).result or {}).get("supportedVersions")
        return [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []


def error_shape(exchange: Exchange, code: int, *, http_status: int | None, is_http: bool) -> str | None:
    """Why `exchange` is not the expected JSON-RPC error (and HTTP status, on HTTP); None if it is."""
    if exchange.failure is not None:
        return f"expected error {code}, got {exchange.describe()}"
    if exchange.error_code != code:
        retired = c.RETIRED_ERROR_CODES.get(exchange.error_code or 0)
        got = exchange.describe() + (f" ({exchange.error_code} is retired: {retired})" if retired else "")
        return f"expected error {code}, got {got}"
    if is_http and http_status is not None and exchange.status != http_status:
        return f"error {code} came with HTTP {exchange.status}, expected {http_status}"
    return None
