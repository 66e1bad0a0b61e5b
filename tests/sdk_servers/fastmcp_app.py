"""A FastMCP (PyPI `fastmcp`) server with default settings: tools, a prompt, resources and a template."""

from __future__ import annotations

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-under-test")


@mcp.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.prompt
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello {name}"


@mcp.resource("data://readme")
def readme() -> str:
    """A short text resource."""
    return "fastmcp under test"


@mcp.resource("data://users/{user_id}")
def user(user_id: str) -> str:
    """One user's record."""
    return f"user {user_id}"


if __name__ == "__main__":
    from tests.sdk_servers.announce import serve, transport_from_argv

    if transport_from_argv(__doc__ or "") == "stdio":
        mcp.run(transport="stdio", show_banner=False)
    else:
        serve(mcp.http_app(path="/mcp"))
