"""Checks of a protected server's authorization (spec basic/authorization/, RFC 9728 Protected Resource Metadata).

Authorization is OPTIONAL, so these apply only to a server that asks for it:
one that answers the suite's requests with 401 (run without credentials), or
one the user runs the suite against with `--header 'Authorization: ...'`. The
401 challenge they read is the answer to the suite's own server/discover, or,
when the suite runs authenticated, to a request with a bearer token no
authorization server issued. Documents are fetched only from the endpoint's
own origin: the client carries the user's headers.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_applicable, not_testable, passed
from evalcore.mcp.client import Exchange

SPEC_AUTH = "docs/specification/2026-07-28/basic/authorization/index.mdx"
SPEC_DISCOVERY = "docs/specification/2026-07-28/basic/authorization/authorization-server-discovery.mdx"
WELL_KNOWN = "/.well-known/oauth-protected-resource"
RESOURCE_METADATA = re.compile(r'resource_metadata\s*=\s*"([^"]*)"|resource_metadata\s*=\s*([^\s,]+)', re.IGNORECASE)


async def _not_protected(ctx: RunContext) -> str | None:
    """Why the rules do not apply (the server asks for no authorization), or None when they do."""
    discover = await ctx.discover()
    if discover.status == 401 or ctx.sends_authorization:
        return None
    return f"the server asks for no authorization (server/discover: HTTP {discover.status}), which is OPTIONAL"


async def _challenge(ctx: RunContext) -> Exchange | None:
    """A 401 the server gave: to the unauthenticated server/discover, else to a request with an invalid bearer token."""
    discover = await ctx.discover()
    if discover.status == 401:
        return discover
    probe = await ctx.invalid_token_probe()
    return probe if probe.status == 401 else None


def _advertised_metadata_url(challenge: Exchange | None) -> str | None:
    header = challenge.header("WWW-Authenticate") if challenge is not None else None
    match = RESOURCE_METADATA.search(header or "")
    return (match.group(1) or match.group(2)) if match else None


def _endpoint(ctx: RunContext) -> str:
    return str(getattr(ctx.client.transport, "target", ""))


def _well_known_urls(endpoint: str) -> list[str]:
    """RFC 9728's well-known URLs for the endpoint: path-suffixed first, then the root."""
    parts = urllib.parse.urlsplit(endpoint)
    path = parts.path.rstrip("/")
    urls = [urllib.parse.urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + path, "", ""))] if path else []
    return [*urls, urllib.parse.urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN, "", ""))]


def canonical_uri(url: str) -> str:
    """The canonical server URI (spec basic/authorization "Canonical Server URI"): lower-case scheme and host, no fragment,
    no trailing slash."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, ""))


async def _metadata(ctx: RunContext) -> tuple[str, dict[str, Any] | None, str]:
    """(where, the document or None, what was found) for the protected resource metadata (memoised per run)."""
    if "auth_metadata" not in ctx.memo:
        advertised = _advertised_metadata_url(await _challenge(ctx))
        endpoint = _endpoint(ctx)
        candidates = [advertised] if advertised else _well_known_urls(endpoint)
        tried = []
        found: tuple[str, dict[str, Any] | None, str] | None = None
        for url in candidates:
            exchange = await ctx.fetch_same_origin(url)
            if exchange is None:
                found = (url, None, f"{url} is on another origin than {endpoint}; the suite fetches nothing off the server's origin")
                break
            if exchange.status != 200:
                tried.append(f"{url}: {exchange.describe()}")
                continue
            try:
                document = json.loads(exchange.wire.body)
            except ValueError:
                found = (url, None, f"{url} answered HTTP 200 with a body that is not JSON: {exchange.wire.body[:120]!r}")
                break
            found = (url, document if isinstance(document, dict) else None, f"{url} answered {json.dumps(document)[:300]}")
            break
        ctx.memo["auth_metadata"] = found or ("", None, "; ".join(tried))
    result: tuple[str, dict[str, Any] | None, str] = ctx.memo["auth_metadata"]
    return result


@check(
    "authorization.invalid_token_refused",
    title="a request with an invalid bearer token gets HTTP 401 (never 200, never 500)",
    spec=SPEC_AUTH,
    quote="Invalid or expired tokens **MUST** receive a HTTP 401 response.",
    http_only=True,
)
async def invalid_token_refused(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    probe = await ctx.invalid_token_probe()
    if probe.status != 401:
        return failed(f"server/discover with an invalid bearer token got {probe.describe()}; invalid tokens must get HTTP 401")
    return passed("HTTP 401")


@check(
    "authorization.resource_metadata_discoverable",
    title="a 401 names resource_metadata in WWW-Authenticate, or the well-known URI serves the metadata",
    spec=SPEC_DISCOVERY,
    quote="MCP servers **MUST** implement one of the following discovery mechanisms to provide authorization server location information to MCP clients",
    http_only=True,
)
async def resource_metadata_discoverable(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    challenge = await _challenge(ctx)
    advertised = _advertised_metadata_url(challenge)
    if advertised:
        return passed(f"WWW-Authenticate names resource_metadata {advertised}")
    url, document, found = await _metadata(ctx)
    if document is not None:
        return passed(f"served at the well-known URI {url}")
    header = challenge.header("WWW-Authenticate") if challenge is not None else None
    said = f"the 401's WWW-Authenticate is {header!r}" if header else "no 401 carried a WWW-Authenticate header"
    return failed(f"{said}, without resource_metadata, and no well-known URI serves the metadata ({found})")


@check(
    "authorization.metadata_authorization_servers",
    title="the protected resource metadata is a JSON object listing at least one authorization server",
    spec=SPEC_DISCOVERY,
    quote="The Protected Resource Metadata document returned by the MCP server **MUST** include the `authorization_servers` field "
    "containing at least one authorization server.",
    http_only=True,
)
async def metadata_authorization_servers(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    url, document, found = await _metadata(ctx)
    if document is None:
        return not_testable(f"no protected resource metadata document to read ({found})") if not url or "another origin" in found else failed(found)
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) and s for s in servers):
        return failed(f"{url}: authorization_servers is {json.dumps(servers)[:200]}; at least one authorization server is required")
    return passed(f"{len(servers)} authorization server(s): {', '.join(servers)[:200]}")


@check(
    "authorization.metadata_resource",
    title="the protected resource metadata's resource is the endpoint's canonical URI",
    spec="https://www.rfc-editor.org/rfc/rfc9728#section-3.3",
    quote='The "resource" value returned MUST be identical to the protected resource\'s resource identifier value into which the '
    "well-known URI path suffix was inserted to create the URL used to retrieve the metadata.",
    http_only=True,
)
async def metadata_resource(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    url, document, found = await _metadata(ctx)
    if document is None:
        return not_testable(f"no protected resource metadata document to read ({found})")
    endpoint = canonical_uri(_endpoint(ctx))
    accepted = {endpoint}
    if urllib.parse.urlsplit(url).path == WELL_KNOWN:  # the root document describes the origin itself
        parts = urllib.parse.urlsplit(endpoint)
        accepted.add(urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", "")))
    resource = document.get("resource")
    if not isinstance(resource, str) or canonical_uri(resource) not in accepted:
        return failed(f"{url}: resource is {json.dumps(resource)[:200]}, not the endpoint's canonical URI {endpoint}")
    return passed(f"resource {resource}")
