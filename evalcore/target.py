"""I/O layer: the MCP server under test, as an HTTP endpoint, a stdio command or a configured name.

An HTTP target may carry headers to send on every request (`--header 'Name: value'`, e.g. the server's
`Authorization`). Their values are secrets: registered with `evalcore.redaction` as the target is built, so
they are redacted from everything written, and kept out of the target's text, its repr and the store.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from evalcore.errors import ConfigError
from evalcore.redaction import register_secret
from evalcore.transport.base import Limits, Transport
from evalcore.transport.http import HttpTransport
from evalcore.transport.stdio import StdioTransport

# Servers the web page and `--server NAME` may start; never an arbitrary command.
CONFIGURED_SERVERS: dict[str, str] = {"reference": "the bundled reference server (evalcore.demo_server, Streamable HTTP on 127.0.0.1)"}


# An RFC 9110 field name, then the value (as `curl -H` takes it).
_HEADER_LINE = re.compile(r"^(?P<name>[!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(?P<value>[^\r\n]*)$")
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}")
# Headers evalcore sets itself on each request, and the conformance checks vary on purpose; so does every `Mcp-*` one.
STDIO_HEADERS = "--header is sent to an HTTP server only (--url, --server, --reference); a stdio server takes its credentials from its environment"
MANAGED_HEADERS = frozenset({"accept", "content-type", "content-length", "host", "last-event-id", "traceparent", "tracestate"})


def parse_header(text: str, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """`Name: value` (as `curl -H` takes it) -> (name, value); `${VAR}` in the value is read from the environment,
    so a token need not be on the command line."""
    env = os.environ if environ is None else environ
    match = _HEADER_LINE.match(text.strip())
    if match is None:
        raise ConfigError(f"--header {text.split(':')[0][:40]!r}...: expected 'Name: value', as curl -H takes it")
    name, value = match["name"], match["value"].strip()
    if name.lower() in MANAGED_HEADERS or name.lower().startswith("mcp-"):
        raise ConfigError(f"--header {name}: evalcore sets this header itself on each request (and conformance checks vary it)")

    def variable(found: re.Match[str]) -> str:
        if found["name"] not in env:
            raise ConfigError(f"--header {name}: the environment variable {found['name']} in its value is not set")
        return env[found["name"]]

    return name, _VARIABLE.sub(variable, value)


def parse_headers(texts: Sequence[str] | None, environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """Every `--header`, in order; the same name twice is refused (which one would be meant?)."""
    headers = tuple(parse_header(text, environ) for text in texts or ())
    names = [name.lower() for name, _ in headers]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"--header {repeated[0]} is given more than once")
    return headers


@dataclass(frozen=True)
class Target:
    """The server under test: an HTTP endpoint or a command speaking stdio."""

    url: str | None = None
    stdio: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)  # sent on every HTTP request; secrets

    def __post_init__(self) -> None:
        if (self.url is None) == (self.stdio is None):
            raise ValueError("give exactly one of url or stdio")
        if self.headers and self.url is None:
            raise ConfigError(
                "--header is sent to an HTTP server only (--url, --server, --reference); a stdio server takes its credentials from its environment"
            )
        for name, value in self.headers:
            register_secret(name, value)

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def __str__(self) -> str:
        return self.url or f"stdio: {self.stdio}"

    def open(self, limits: Limits) -> Transport:
        if self.url is not None:
            return HttpTransport(self.url, limits, headers=dict(self.headers))
        assert self.stdio is not None
        return StdioTransport(self.stdio, limits)


@contextlib.contextmanager
def resolve_target(
    *, url: str | None = None, stdio: str | None = None, server: str | None = None, headers: tuple[tuple[str, str], ...] = ()
) -> Iterator[Target]:
    """The Target for exactly one of `url`, `stdio` or a configured server name (started for the duration)."""
    if sum(x is not None for x in (url, stdio, server)) != 1:
        raise ConfigError("give exactly one of --url, --stdio or --server")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(f"--url must start with http:// or https://, got {url!r}")
    if server is None:
        yield Target(url=url, stdio=stdio, headers=headers)
        return
    if server not in CONFIGURED_SERVERS:
        raise ConfigError(f"unknown server {server!r}; configured: {', '.join(CONFIGURED_SERVERS)}")
    from evalcore.reference import running_reference_server

    with running_reference_server() as reference_url:
        yield Target(url=reference_url, headers=headers)
