"""Demo server, prefix routing: several ASGI apps in one process, each under its own first path segment.

`/NAME/...` goes to the app registered as NAME, with the scope untouched (each
app is built for its full path, so nothing is rewritten); any other path is a
404. Starlette runs no lifespan of an app it merely calls, so the router's own
lifespan enters every app's lifespan context, and leaves them in reverse order.
Knows nothing about MCP or defects.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from starlette.routing import Router
from starlette.types import ASGIApp, Receive, Scope, Send

from evalcore.demo_server import wire

Lifespan = Callable[[], AbstractAsyncContextManager[Any]]


class PrefixRouter:
    """ASGI app dispatching on the first path segment; its lifespan runs every `lifespans` entry."""

    def __init__(self, apps: Mapping[str, ASGIApp], lifespans: Sequence[Lifespan]) -> None:
        self._apps = dict(apps)
        self._lifespans = tuple(lifespans)
        self._lifespan_protocol = Router(lifespan=self._run_lifespans)  # Starlette speaks the ASGI lifespan messages

    @contextlib.asynccontextmanager
    async def _run_lifespans(self, _app: object) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for lifespan in self._lifespans:
                await stack.enter_async_context(lifespan())
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan_protocol(scope, receive, send)
            return
        app = self._apps.get(scope["path"].split("/", 2)[1]) if scope["path"].startswith("/") else None
        if app is not None:
            await app(scope, receive, send)
        elif scope["type"] == "http":
            await wire.send_bytes(send, 404, b"Not Found", "text/plain; charset=utf-8")
        else:
            await send({"type": "websocket.close", "code": 1000})
