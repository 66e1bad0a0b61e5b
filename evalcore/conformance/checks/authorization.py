"""Checks of a protected server's authorization (spec basic/authorization/, RFC 9728 Protected Resource Metadata).

Authorization is OPTIONAL, so these apply only to a server that asks for it:
one that answers the suite's requests with 401 (run without credentials), or
one the user runs the suite against with `--header 'Authorization: ...'`. The
401 challenge they read is the answer to the suite's own server/discover, or,
when the suite runs authenticated, to a request with a bearer token no
authorization server issued. The protected resource metadata is fetched as a
client that has no token yet fetches it: from the URL the challenge's
`resource_metadata` names (RFC 9728 §5.1), else from the well-known URIs, and
without any of the user's headers. A protected server whose metadata cannot be
read that way is never conformant.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
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


@dataclass(frozen=True)
class MetadataFetch:
    """The protected resource metadata as a client without a token reads it."""

    url: str  # where it was read (or the URL that failed); "" when there was nothing to fetch
    advertised: bool  # the URL is the one WWW-Authenticate's resource_metadata names
    exchange: Exchange | None  # the answer that decided it: an HTTP 200 (a document, or a body that is not one)
    document: dict[str, Any] | None
    problem: str  # why there is no document ("" when there is one)


async def _metadata(ctx: RunContext) -> MetadataFetch:
    """The protected resource metadata, fetched without credentials (memoised per run)."""
    if "auth_metadata" not in ctx.memo:
        advertised = _advertised_metadata_url(await _challenge(ctx))
        candidates = [advertised] if advertised else _well_known_urls(_endpoint(ctx))
        tried = []
        found: MetadataFetch | None = None
        for url in candidates:
            exchange = await ctx.fetch_without_credentials(url)
            if exchange is None:
                found = MetadataFetch(url, bool(advertised), None, None, f"{url} is not an http(s) URL")
                break
            if exchange.status != 200:
                tried.append(f"{url}: {exchange.describe()}")
                continue
            try:
                document = json.loads(exchange.wire.body)
            except ValueError:
                problem = f"{url} answered HTTP 200 with a body that is not JSON: {exchange.wire.body[:120]!r}"
                found = MetadataFetch(url, bool(advertised), exchange, None, problem)
                break
            if not isinstance(document, dict):
                problem = f"{url} answered HTTP 200 with JSON that is not an object: {json.dumps(document)[:120]}"
                found = MetadataFetch(url, bool(advertised), exchange, None, problem)
                break
            found = MetadataFetch(url, bool(advertised), exchange, document, "")
            break
        where = " (fetched without credentials, as a client without a token fetches it)"
        ctx.memo["auth_metadata"] = found or MetadataFetch(candidates[-1], bool(advertised), None, None, "; ".join(tried) + where)
    result: MetadataFetch = ctx.memo["auth_metadata"]
    return result


def _unread(fetch: MetadataFetch) -> Verdict:
    """What a check that reads the document says when there is none: metadata_readable (or discoverable) fails it."""
    return not_testable(f"no protected resource metadata document to read ({fetch.problem}); see authorization.metadata_readable")


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
    fetch = await _metadata(ctx)
    if fetch.document is not None:
        return passed(f"served at the well-known URI {fetch.url}")
    header = challenge.header("WWW-Authenticate") if challenge is not None else None
    said = f"the 401's WWW-Authenticate is {header!r}" if header else "no 401 carried a WWW-Authenticate header"
    return failed(f"{said}, without resource_metadata, and no well-known URI serves the metadata ({fetch.problem})")


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
    fetch = await _metadata(ctx)
    url, document = fetch.url, fetch.document
    if document is None:
        return _unread(fetch)
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
    fetch = await _metadata(ctx)
    url, document = fetch.url, fetch.document
    if document is None:
        return _unread(fetch)
    endpoint = canonical_uri(_endpoint(ctx))
    accepted = {endpoint}
    if urllib.parse.urlsplit(url).path == WELL_KNOWN:  # the root document describes the origin itself
        parts = urllib.parse.urlsplit(endpoint)
        accepted.add(urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", "")))
    resource = document.get("resource")
    if not isinstance(resource, str) or canonical_uri(resource) not in accepted:
        return failed(f"{url}: resource is {json.dumps(resource)[:200]}, not the endpoint's canonical URI {endpoint}")
    return passed(f"resource {resource}")


@check(
    "authorization.metadata_readable",
    title="the protected resource metadata is served without credentials: HTTP 200 and a JSON object, at the URL the 401 names",
    spec=SPEC_DISCOVERY,
    quote="MCP servers **MUST** implement the OAuth 2.0 Protected Resource Metadata (RFC9728) specification to indicate the "
    "locations of authorization servers.",
    http_only=True,
)
async def metadata_readable(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    fetch = await _metadata(ctx)
    if fetch.document is not None:
        return passed(f"read without credentials from {fetch.url}")
    if fetch.advertised:
        return failed(f"WWW-Authenticate names resource_metadata {fetch.url} (RFC 9728 §5.1: the metadata's URL), but it cannot be read: {fetch.problem}")
    return failed(f"no 401 names resource_metadata, and no well-known URI serves the metadata: {fetch.problem}")


@check(
    "authorization.metadata_content_type",
    title="the protected resource metadata is served as application/json",
    spec="https://www.rfc-editor.org/rfc/rfc9728#section-3.2",
    quote='A successful response MUST use the 200 OK HTTP status code and return a JSON object using the "application/json" '
    "content type that contains a set of claims as its members that are a subset of the metadata values defined in Section 2.",
    http_only=True,
)
async def metadata_content_type(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    fetch = await _metadata(ctx)
    if fetch.exchange is None:
        return _unread(fetch)
    content_type = fetch.exchange.header("Content-Type")
    if (content_type or "").split(";", 1)[0].strip().lower() != "application/json":
        said = f"Content-Type {content_type!r}" if content_type else "no Content-Type"
        return failed(f"{fetch.url} answered HTTP 200 with {said}; the metadata must be served as application/json")
    return passed(f"{fetch.url}: Content-Type {content_type}")


@check(
    "authorization.challenge_on_401",
    title="every 401 carries a WWW-Authenticate challenge, even when the well-known URI serves the metadata",
    spec="https://www.rfc-editor.org/rfc/rfc9110#section-15.5.2",
    quote="The server generating a 401 response MUST send a WWW-Authenticate header field (Section 11.6.1) containing at "
    "least one challenge applicable to the target resource.",
    http_only=True,
)
async def challenge_on_401(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    answers = [("server/discover", await ctx.discover()), ("server/discover with an invalid bearer token", await ctx.invalid_token_probe())]
    foreign = await ctx.foreign_token_probe()
    if foreign is not None:
        answers.append(("server/discover with the --foreign-token", foreign))
    answers.extend((exchange.method, exchange) for exchange in ctx.exchanges if exchange is not answers[0][1])
    refusals = [(label, exchange) for label, exchange in answers if exchange.status == 401]
    if not refusals:
        return not_testable("no request got HTTP 401, so there is no challenge to read")
    bare = [label for label, exchange in refusals if not (exchange.header("WWW-Authenticate") or "").strip()]
    if bare:
        return failed(f"HTTP 401 without WWW-Authenticate to: {', '.join(dict.fromkeys(bare))}; every 401 must carry a challenge")
    return passed(f"{len(refusals)} 401 answer(s), each with WWW-Authenticate")


@check(
    "authorization.token_audience",
    title="a token issued for another resource (--foreign-token) gets HTTP 401",
    spec=SPEC_AUTH,
    quote="MCP servers **MUST** validate that access tokens were issued specifically for them as the intended audience, according to RFC 8707 Section 2.",
    http_only=True,
)
async def token_audience(ctx: RunContext) -> Verdict:
    reason = await _not_protected(ctx)
    if reason:
        return not_applicable(reason)
    probe = await ctx.foreign_token_probe()
    if probe is None:
        return not_testable("no --foreign-token given (a token your authorization server issued for another resource); give one to check it is refused")
    if probe.status == 401:
        return passed("the token issued for another resource got HTTP 401")
    said = f"server/discover with the --foreign-token (issued for another resource) got {probe.describe()}"
    if probe.status is not None and 200 <= probe.status < 300:
        return failed(f"{said}: the server accepted a token not issued for it")
    return failed(f"{said}; a token not issued for this server must get HTTP 401")
