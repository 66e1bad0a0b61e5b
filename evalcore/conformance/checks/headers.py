"""Checks of the Streamable HTTP request headers: the server must refuse missing or mismatched ones with 400 + -32020."""

from __future__ import annotations

from evalcore.conformance.context import RunContext, error_shape
from evalcore.conformance.era import HEADERLESS_VERSIONS
from evalcore.conformance.registry import Verdict, check, failed, not_applicable, not_testable, passed
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.envelope import force_base64_header_value

SPEC = "docs/specification/2026-07-28/basic/transports/streamable-http.mdx"
REJECT = (
    "When rejecting a request due to header validation failure, servers **MUST** return HTTP status `400 Bad Request` and **MUST** include "
    "a JSON-RPC error response using the following error code"
)
MISMATCH = (
    "Servers that process the request body **MUST** reject requests where the values specified in the headers do not match "
    "the corresponding values in the request body."
)


async def _expect_header_mismatch(ctx: RunContext, method: str, params: dict[str, object] | None, headers: dict[str, str | None], what: str) -> Verdict:
    exchange = await ctx.request(method, params, headers=headers)
    problem = error_shape(exchange, c.HEADER_MISMATCH, http_status=400, is_http=True)
    if problem:
        return failed(f"{what}: {problem}")
    return passed(f"{what}: 400 -32020")


@check("headers.method_required", title="a POST without Mcp-Method is refused with 400 -32020", spec=SPEC, http_only=True, quote=REJECT)
async def method_required(ctx: RunContext) -> Verdict:
    return await _expect_header_mismatch(ctx, "tools/list", None, {c.HEADER_METHOD: None}, "tools/list without Mcp-Method")


@check("headers.method_mismatch", title="a POST whose Mcp-Method differs from the body is refused with 400 -32020", spec=SPEC, http_only=True, quote=MISMATCH)
async def method_mismatch(ctx: RunContext) -> Verdict:
    return await _expect_header_mismatch(ctx, "tools/list", None, {c.HEADER_METHOD: "prompts/list"}, "tools/list with Mcp-Method: prompts/list")


async def _named(ctx: RunContext) -> tuple[str, dict[str, object]] | None:
    return await ctx.named_target()


@check(
    "headers.name_required",
    title="tools/call, prompts/get, resources/read without Mcp-Name are refused with 400 -32020",
    spec=SPEC,
    http_only=True,
    quote=REJECT,
)
async def name_required(ctx: RunContext) -> Verdict:
    target = await _named(ctx)
    if target is None:
        return not_testable("no read-only tool, prompt or resource to address safely")
    method, params = target
    return await _expect_header_mismatch(ctx, method, params, {c.HEADER_NAME: None}, f"{method} without Mcp-Name")


@check("headers.name_mismatch", title="an Mcp-Name that differs from the body is refused with 400 -32020", spec=SPEC, http_only=True, quote=MISMATCH)
async def name_mismatch(ctx: RunContext) -> Verdict:
    target = await _named(ctx)
    if target is None:
        return not_testable("no read-only tool, prompt or resource to address safely")
    method, params = target
    return await _expect_header_mismatch(ctx, method, params, {c.HEADER_NAME: f"evalcore-other-{ctx.nonce}"}, f"{method} with a different Mcp-Name")


@check(
    "headers.name_base64",
    title="a base64-sentinel Mcp-Name is decoded before comparing",
    spec=SPEC,
    http_only=True,
    quote="In particular, servers **MUST** decode an encoded `Mcp-Name` or `Mcp-Param-{Name}` value before comparing it to the corresponding "
    "request body value during Server Validation.",
)
async def name_base64(ctx: RunContext) -> Verdict:
    target = await _named(ctx)
    if target is None:
        return not_testable("no read-only tool, prompt or resource to address safely")
    method, params = target
    name = str(params.get("name") or params.get("uri"))
    exchange = await ctx.request(method, params, headers={c.HEADER_NAME: force_base64_header_value(name)})
    if exchange.error_code == c.HEADER_MISMATCH or exchange.result is None:
        return failed(f"{method} {name!r} with Mcp-Name in =?base64?...?= form: {exchange.describe()} (servers MUST decode it before comparing)")
    return passed("decoded and accepted")


@check(
    "headers.version_mismatch",
    title="MCP-Protocol-Version differing from _meta is refused with 400 -32020",
    spec=SPEC,
    http_only=True,
    quote="If the values do not match, the server **MUST** reject the request with `400 Bad Request` and a `HeaderMismatch` JSON-RPC error",
)
async def version_mismatch(ctx: RunContext) -> Verdict:
    verdict = await _expect_header_mismatch(
        ctx, "tools/list", None, {c.HEADER_PROTOCOL_VERSION: c.LEGACY_PROTOCOL_VERSION}, f"header {c.LEGACY_PROTOCOL_VERSION}, _meta {c.PROTOCOL_VERSION}"
    )
    return verdict


@check(
    "headers.version_required",
    title="a POST without MCP-Protocol-Version is refused with 400 -32020",
    spec=SPEC,
    http_only=True,
    quote="A server that does not support such clients **MUST** reject a request without the header per Server Validation.",
)
async def version_required(ctx: RunContext) -> Verdict:
    if ctx.profile is not None and ctx.profile.accepts_headerless_clients:
        versions = sorted(HEADERLESS_VERSIONS.intersection(ctx.profile.legacy_versions + ctx.profile.modern_versions))
        return not_applicable(f"the server serves {', '.join(versions)} clients, so it MAY read a request without the header as 2025-03-26")
    return await _expect_header_mismatch(ctx, "tools/list", None, {c.HEADER_PROTOCOL_VERSION: None}, "tools/list without MCP-Protocol-Version")
