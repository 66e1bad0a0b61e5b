"""Serve an ASGI app with uvicorn on 127.0.0.1:0 and print the bound URL to stderr (test fixtures wait for it)."""

from __future__ import annotations

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


def serve(app: Any, path: str = "/mcp") -> None:
    _AnnouncingServer(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"), path).run()
