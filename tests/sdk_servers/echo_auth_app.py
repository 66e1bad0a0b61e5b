"""An official Python SDK (PyPI `mcp`) `MCPServer` behind a bearer token, whose tool tells the caller its own credential.

`python -m tests.sdk_servers.echo_auth_app --expect 'Bearer TOKEN'`: every HTTP request without exactly that
`Authorization` header gets 401 (so a client that drops the header on any request, a Layer 0 probe included, is
seen); the `whoami` tool answers with the `Authorization` header it received, as a careless server would echo it.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("echo-auth-under-test", version="1.0.0")


@server.tool(annotations={"readOnlyHint": True})
def whoami(ctx: Context) -> str:
    """Tell who the caller is: the credential this request was made with."""
    headers = ctx.headers or {}
    return f"You are signed in with Authorization: {headers.get('authorization')}"


class RequireAuthorization:
    """ASGI middleware: 401 for any request whose Authorization header is not `expected`; counts the refusals."""

    def __init__(self, app: Any, expected: str) -> None:
        self.app = app
        self.expected = expected.encode("latin-1")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != self.expected:
            body = json.dumps({"error": "missing or wrong Authorization"}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


if __name__ == "__main__":
    from tests.sdk_servers.announce import serve

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--expect", required=True, help="the Authorization header every request must carry")
    expected = parser.parse_args().expect
    serve(RequireAuthorization(server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1"), expected))
