"""Serve an ASGI app with uvicorn on 127.0.0.1:0 and print the bound URL to stderr (test fixtures wait for it)."""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

import uvicorn


class _AnnouncingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, path: str) -> None:
        super().__init__(config)
        self._path = path

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            print(f"listening on http://{host}:{port}{self._path}", file=sys.stderr, flush=True)


def transport_from_argv(description: str) -> str:
    """`--http` (default) or `--stdio`, from the command line."""
    parser = argparse.ArgumentParser(description=description)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1 (a free port; the URL goes to stderr)")
    group.add_argument("--stdio", action="store_true", help="serve stdio")
    return "stdio" if parser.parse_args().stdio else "http"


def serve(app: Any, path: str = "/mcp") -> None:
    _AnnouncingServer(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"), path).run()


def serve_on(app: Any, sock: socket.socket, path: str = "/mcp") -> None:
    """`serve`, on a socket the caller bound already (when the app must know its own URL before it starts)."""
    _AnnouncingServer(uvicorn.Config(app, log_level="warning"), path).run(sockets=[sock])
