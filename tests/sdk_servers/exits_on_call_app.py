"""An official Python SDK (PyPI `mcp`) `MCPServer` over stdio that lists the reference server's tool names and ends its
process on any tool call: a server that goes away in the middle of a replay."""

from __future__ import annotations

import os

from mcp.server import MCPServer

server = MCPServer("exits-on-call", version="1.0.0")


def _exit(city: str = "", customer_id: str = "", subject: str = "", description: str = "") -> str:
    """Ends the server process."""
    os._exit(3)


for name in ("get_weather", "get_customer", "create_support_ticket"):
    server.add_tool(_exit, name=name)


if __name__ == "__main__":
    server.run("stdio")
