"""I/O layer: the MCP server under test, as an HTTP endpoint, a stdio command or a configured name."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from evalcore.errors import ConfigError
from evalcore.transport.base import Limits, Transport
from evalcore.transport.http import HttpTransport
from evalcore.transport.stdio import StdioTransport

# Servers the web page and `--server NAME` may start; never an arbitrary command.
CONFIGURED_SERVERS: dict[str, str] = {"reference": "the bundled reference server (evalcore.demo_server, Streamable HTTP on 127.0.0.1)"}


@dataclass(frozen=True)
class Target:
    """The server under test: an HTTP endpoint or a command speaking stdio."""

    url: str | None = None
    stdio: str | None = None

    def __post_init__(self) -> None:
        if (self.url is None) == (self.stdio is None):
            raise ValueError("give exactly one of url or stdio")

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def __str__(self) -> str:
        return self.url or f"stdio: {self.stdio}"

    def open(self, limits: Limits) -> Transport:
        if self.url is not None:
            return HttpTransport(self.url, limits)
        assert self.stdio is not None
        return StdioTransport(self.stdio, limits)


@contextlib.contextmanager
def resolve_target(*, url: str | None = None, stdio: str | None = None, server: str | None = None) -> Iterator[Target]:
    """The Target for exactly one of `url`, `stdio` or a configured server name (started for the duration)."""
    if sum(x is not None for x in (url, stdio, server)) != 1:
        raise ConfigError("give exactly one of --url, --stdio or --server")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(f"--url must start with http:// or https://, got {url!r}")
    if server is None:
        yield Target(url=url, stdio=stdio)
        return
    if server not in CONFIGURED_SERVERS:
        raise ConfigError(f"unknown server {server!r}; configured: {', '.join(CONFIGURED_SERVERS)}")
    from evalcore.reference import running_reference_server

    with running_reference_server() as reference_url:
        yield Target(url=reference_url)
