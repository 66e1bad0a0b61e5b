"""An official Python SDK (PyPI `mcp`) `MCPServer` protected by OAuth: its own `AuthSettings` and a local token verifier.

`python -m tests.sdk_servers.oauth_app [--defect NAME]`: the SDK answers a request without a valid bearer token
with 401 and `WWW-Authenticate: Bearer ... resource_metadata="..."`, and serves RFC 9728 protected resource metadata
at `/.well-known/oauth-protected-resource/mcp`. The one valid token is `evalcore-test-token` (`Authorization: Bearer
evalcore-test-token`); the authorization server it names is never contacted. A defect breaks one rule:

- `no_discovery`: the 401 carries no resource_metadata, and no well-known URI serves the metadata;
- `wrong_resource`: the metadata names another resource than the endpoint;
- `invalid_token_500`: a request with an unknown bearer token gets 500 instead of 401.
"""

from __future__ import annotations

import argparse
import json
import socket
from typing import Any

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from tests.sdk_servers.announce import serve_on

VALID_TOKEN = "evalcore-test-token"
DEFECTS = ("no_discovery", "wrong_resource", "invalid_token_500")


class LocalTokenVerifier:
    """Accepts exactly one token, issued for `resource`."""

    def __init__(self, resource: str) -> None:
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if token != VALID_TOKEN:
            return None
        return AccessToken(token=token, client_id="evalcore-tests", scopes=["mcp"], resource=self.resource)


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
        if (
            self.defect == "invalid_token_500"
            and headers.get(b"authorization", b"").startswith(b"Bearer ")
            and not headers[b"authorization"].endswith(VALID_TOKEN.encode())
        ):
            return await _reply(send, 500, {"error": "token lookup crashed"})

        async def without_resource_metadata(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and self.defect == "no_discovery":
                challenge = b'Bearer error="invalid_token"'
                message = {**message, "headers": [(k, challenge if k.lower() == b"www-authenticate" else v) for k, v in message["headers"]]}
            await send(message)

        await self.app(scope, receive, without_resource_metadata)


async def _reply(send: Any, status: int, body: dict[str, str]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def build(port: int, defect: str | None) -> Any:
    endpoint = f"http://127.0.0.1:{port}/mcp"
    resource = f"http://127.0.0.1:{port}/elsewhere" if defect == "wrong_resource" else endpoint
    auth = AuthSettings(issuer_url="https://auth.example.invalid", resource_server_url=resource, required_scopes=["mcp"])
    server = MCPServer("oauth-under-test", version="1.0.0", auth=auth, token_verifier=LocalTokenVerifier(resource))

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
