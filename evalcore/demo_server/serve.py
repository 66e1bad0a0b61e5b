"""Demo server, serving layer: put the server on Streamable HTTP (uvicorn) or stdio.

Stacks, outermost first:
- HTTP: `TamperMiddleware` (when a defect is on) -> `StatelessHTTPGuard` -> SDK app.
- HTTP, every variant at once: `PrefixRouter` -> one such stack per variant, at `/NAME<path>`.
- stdio: `StdioPipe` (parse errors, defect hooks) -> SDK stdio transport -> 2026-only loop.
`bare=True` is the SDK as shipped: no guard, no pipe, the SDK's own stdio loop.
"""

from __future__ import annotations

import functools
import io
import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.types import ASGIApp

from evalcore.demo_server.app import build_server
from evalcore.demo_server.defect_http import TamperMiddleware
from evalcore.demo_server.defects import DEFECTS
from evalcore.demo_server.prefix_router import PrefixRouter
from evalcore.demo_server.spec_fixes import StatelessHTTPGuard, serve_modern_stdio
from evalcore.demo_server.stdio_wire import StdioPipe
from evalcore.demo_server.tamper import Tamper

_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def security_settings(host: str) -> TransportSecuritySettings:
    """DNS-rebinding protection as the SDK sets it up for loopback, plus the bound host when it is another."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if host not in _LOCAL_HOSTS:
        hosts.append(f"{host}:*")
        origins.append(f"http://{host}:*")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def http_app(*, host: str, path: str, bare: bool = False, tamper: Tamper | None = None, variant: str = "v1") -> ASGIApp:
    """The ASGI app for the MCP endpoint at `path`."""
    return _endpoint(host=host, path=path, bare=bare, tamper=tamper, variant=variant)[0]


def _endpoint(*, host: str, path: str, bare: bool, tamper: Tamper | None, variant: str) -> tuple[ASGIApp, Starlette]:
    """The endpoint's outermost app, and the SDK app inside it (whose lifespan runs the session manager)."""
    if bare:
        sdk = build_server(unknown_tool_fix=False, variant=variant).streamable_http_app(streamable_http_path=path, host=host)
        return sdk, sdk
    security = security_settings(host)
    server = build_server(unknown_tool_fix=tamper is None or not tamper.keep_sdk_unknown_tool, variant=variant)
    sdk = server.streamable_http_app(streamable_http_path=path, host=host, transport_security=security)
    guarded = StatelessHTTPGuard(sdk, path=path, security=security)
    # The fixed server has no defect layer: reading and decoding every body again for no rewrite cost it CPU.
    return (guarded if tamper is None else TamperMiddleware(guarded, path=path, tamper=tamper)), sdk


def variant_names() -> tuple[str, ...]:
    """What `--all-variants` serves, each at `/NAME<path>`: the fixed server, the bare SDK, and every defect."""
    return ("clean", "bare", *DEFECTS)


def all_variants_app(*, host: str, path: str, variant: str = "v1") -> ASGIApp:
    """Every variant in one app. Each has its own server, session manager and freshly built `Tamper` (a
    defect's counters are its own); they share only the process, so the desk's conversation sandboxes
    (`desk_state.STATE`) and the tracing provider."""
    apps: dict[str, ASGIApp] = {}
    sdk_apps: list[Starlette] = []
    for name in variant_names():
        tamper = DEFECTS[name].build() if name in DEFECTS else None
        apps[name], sdk = _endpoint(host=host, path=f"/{name}{path}", bare=name == "bare", tamper=tamper, variant=variant)
        sdk_apps.append(sdk)
    return PrefixRouter(apps, [functools.partial(_lifespan_of, sdk) for sdk in sdk_apps])


def _lifespan_of(sdk: Starlette) -> AbstractAsyncContextManager[Any]:
    """The SDK app's own lifespan (it runs that endpoint's session manager), for a router to enter."""
    return sdk.router.lifespan_context(sdk)


class _AnnouncingServer(uvicorn.Server):
    """uvicorn, plus one stderr line naming the real URL once the socket is bound (tests wait for it)."""

    def __init__(self, config: uvicorn.Config, path: str, note: str = "") -> None:
        super().__init__(config)
        self._path = path
        self._note = note

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            print(f"listening on http://{shown}:{port}{self._path}{self._note}", file=sys.stderr, flush=True)


def run_http(*, host: str, port: int, path: str, bare: bool = False, tamper: Tamper | None = None, variant: str = "v1", all_variants: bool = False) -> None:
    """Serve one endpoint at `path`; with `all_variants`, every variant at `/NAME<path>`, announcing the base URL."""
    if all_variants:
        app = all_variants_app(host=host, path=path, variant=variant)
        announced, note = "", f" (every variant at /NAME{path}; NAME: clean, bare or a defect name)"
    else:
        app, announced, note = http_app(host=host, path=path, bare=bare, tamper=tamper, variant=variant), path, ""
    # No WebSocket protocol (MCP has none; uvicorn would import the websockets package for it) and no access log.
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", ws="none", access_log=False)
    _AnnouncingServer(config, announced, note).run()


def run_stdio(*, bare: bool = False, tamper: Tamper | None = None, variant: str = "v1") -> None:
    if bare:
        build_server(unknown_tool_fix=False, variant=variant).run("stdio")
        return
    tamper = tamper or Tamper()
    server = build_server(unknown_tool_fix=not tamper.keep_sdk_unknown_tool, variant=variant)

    async def main() -> None:
        # Explicit UTF-8 text layers: the platform's stdio encodings are not to be trusted.
        stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        stdout = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n"))
        pipe = StdioPipe(tamper, stdout)
        await serve_modern_stdio(server, pipe.inbound(stdin), pipe)  # type: ignore[arg-type]

    anyio.run(main)
