"""An official Python SDK (PyPI `mcp`) `MCPServer` protected by OAuth: its own `AuthSettings` and a local token verifier.

`python -m tests.sdk_servers.oauth_app [--defect NAME]`: the SDK answers a request without a valid bearer token
with 401 and `WWW-Authenticate: Bearer ... resource_metadata="..."`, and serves RFC 9728 protected resource metadata
at `/.well-known/oauth-protected-resource/mcp`. The one valid token is `evalcore-test-token` (`Authorization: Bearer
evalcore-test-token`); `evalcore-foreign-token` is one the same authorization server issued for another resource, which
the verifier refuses. The authorization server it names is never contacted. A defect breaks one rule:

- `no_discovery`: the 401 carries no resource_metadata, and no well-known URI serves the metadata;
- `wrong_resource`: the metadata names another resource than the endpoint;
- `invalid_token_500`: a request with an unknown bearer token gets 500 instead of 401;
- `metadata_url_404`: the 401's resource_metadata names a URL that answers 404 (the well-known URI still serves it);
- `metadata_needs_token`: the metadata answers 401 unless the request carries the valid token;
- `no_challenge_header`: no 401 carries WWW-Authenticate (the well-known URI still serves the metadata);
- `metadata_text_plain`: the metadata is served as text/plain;
- `accepts_foreign_token`: the verifier does not check whom a token was issued for, so it takes the foreign token.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
from typing import Any

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from tests.sdk_servers.announce import serve_on

VALID_TOKEN = "evalcore-test-token"
FOREIGN_TOKEN = "evalcore-foreign-token"  # issued by the same authorization server, for another resource
FOREIGN_RESOURCE = "https://other.example.invalid/mcp"
DEFECTS = (
    "no_discovery",
    "wrong_resource",
    "invalid_token_500",
    "metadata_url_404",
    "metadata_needs_token",
    "no_challenge_header",
    "metadata_text_plain",
    "accepts_foreign_token",
)
MISSING_METADATA = "/.well-known/oauth-protected-resource/missing"


class LocalTokenVerifier:
    """Knows two tokens: the valid one, issued for `resource`, and one issued for another resource, which it refuses
    unless `check_audience` is off."""

    def __init__(self, resource: str, *, check_audience: bool = True) -> None:
        self.resource = resource
        self.check_audience = check_audience

    async def verify_token(self, token: str) -> AccessToken | None:
        issued_for = {VALID_TOKEN: self.resource, FOREIGN_TOKEN: FOREIGN_RESOURCE}.get(token)
        if issued_for is None or (self.check_audience and issued_for != self.resource):
            return None
        return AccessToken(token=token, client_id="evalcore-tests", scopes=["mcp"], resource=issued_for)


class Defective:
    """ASGI middleware that breaks one authorization rule of the SDK's app."""

    def __init__(self, app: Any, defect: str) -> None:
        self.app = app
        self.defect = defect

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if self.defect == "no_discovery" and scope["path"].startswith("/.well-known/"):
            return await _reply(send, 404, {"error": "not found"})
        well_known = scope["path"].startswith("/.well-known/")
        if self.defect == "metadata_url_404" and scope["path"] == MISSING_METADATA:
            return await _reply(send, 404, {"error": "not found"})
        if self.defect == "metadata_needs_token" and well_known and headers.get(b"authorization") != f"Bearer {VALID_TOKEN}".encode():
            return await _reply(send, 401, {"error": "invalid_token"}, challenge=b'Bearer error="invalid_token"')
        if (
            self.defect == "invalid_token_500"
            and headers.get(b"authorization", b"").startswith(b"Bearer ")
            and headers[b"authorization"] not in (f"Bearer {VALID_TOKEN}".encode(), f"Bearer {FOREIGN_TOKEN}".encode())
        ):
            return await _reply(send, 500, {"error": "token lookup crashed"})

        async def broken(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": self._headers(message["headers"], scope, well_known)}
            await send(message)

        await self.app(scope, receive, broken)

    def _headers(self, headers: list[tuple[bytes, bytes]], scope: dict[str, Any], well_known: bool) -> list[tuple[bytes, bytes]]:
        """The response's headers, broken as the defect says."""
        if self.defect == "no_discovery":
            return [(k, b'Bearer error="invalid_token"' if k.lower() == b"www-authenticate" else v) for k, v in headers]
        if self.defect == "no_challenge_header":
            return [(k, v) for k, v in headers if k.lower() != b"www-authenticate"]
        if self.defect == "metadata_text_plain" and well_known:
            return [(k, b"text/plain" if k.lower() == b"content-type" else v) for k, v in headers]
        if self.defect == "metadata_url_404":
            server = scope["server"]
            missing = f"http://{server[0]}:{server[1]}{MISSING_METADATA}".encode()
            pointed = b'resource_metadata="' + missing + b'"'
            return [(k, re.sub(rb'resource_metadata="[^"]*"', pointed, v) if k.lower() == b"www-authenticate" else v) for k, v in headers]
        return headers


async def _reply(send: Any, status: int, body: dict[str, str], challenge: bytes | None = None) -> None:
    headers = [(b"content-type", b"application/json"), *([(b"www-authenticate", challenge)] if challenge else [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def build(port: int, defect: str | None) -> Any:
    endpoint = f"http://127.0.0.1:{port}/mcp"
    resource = f"http://127.0.0.1:{port}/elsewhere" if defect == "wrong_resource" else endpoint
    auth = AuthSettings(issuer_url="https://auth.example.invalid", resource_server_url=resource, required_scopes=["mcp"])
    verifier = LocalTokenVerifier(resource, check_audience=defect != "accepts_foreign_token")
    server = MCPServer("oauth-under-test", version="1.0.0", auth=auth, token_verifier=verifier)

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    return Defective(app, defect) if defect else app


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--defect", choices=DEFECTS, help="break one authorization rule")
    defect = parser.parse_args().defect
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # the port is part of the resource identifier, so it is known before the app is built
    serve_on(build(sock.getsockname()[1], defect), sock)
