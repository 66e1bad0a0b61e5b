"""An official Python SDK (PyPI `mcp`) `MCPServer` with default settings: tools, a prompt, resources, a template, completion."""

from __future__ import annotations

from mcp.server import MCPServer

server = MCPServer("python-sdk-under-test", version="1.0.0")


@server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Review a piece of code."""
    return f"Review this {language} code:\n{code}"


@server.resource("data://readme")
def readme() -> str:
    """A short text resource."""
    return "python sdk under test"


@server.resource("data://users/{user_id}")
def user(user_id: str) -> str:
    """One user's record."""
    return f"user {user_id}"


if __name__ == "__main__":
    from tests.sdk_servers.announce import serve, transport_from_argv

    if transport_from_argv(__doc__ or "") == "stdio":
        server.run("stdio")
    else:
        serve(server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1"))
