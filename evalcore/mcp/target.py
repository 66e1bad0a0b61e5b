"""I/O layer: the MCP server under test, as an HTTP endpoint, a stdio command or a configured name.

An HTTP target may carry headers to send on every request (`--header 'Name: value'`, e.g. the server's
`Authorization`). Their values are secrets: registered with `evalcore.redaction` as the target is built, so
they are redacted from everything written, and kept out of the target's text, its repr and the store.
So are the credentials written into the target itself: a `--url`'s userinfo and credential query parameters
(`?key=`, `?token=`, ...), and a `--stdio` command's `--api-key X`, `--token=X` and `NAME=value` assignments.

A stdio server starts with a minimal environment (`evalcore.mcp.transport.stdio.server_environment`), plus the
variables `--server-env NAME` passes on by name.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from evalcore.errors import ConfigError
from evalcore.mcp.configured import CONFIGURED_SERVERS, REFERENCE_ARGS
from evalcore.mcp.transport.base import Limits, Transport
from evalcore.mcp.transport.http import HttpTransport
from evalcore.mcp.transport.stdio import StdioTransport
from evalcore.redaction import clip, register_command_secrets, register_secret, register_url_secrets

# An RFC 9110 field name, then the value (as `curl -H` takes it).
_HEADER_LINE = re.compile(r"^(?P<name>[!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(?P<value>[^\r\n]*)$")
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}")
# Headers evalcore sets itself on each request, and the conformance checks vary on purpose; so does every `Mcp-*` one.
STDIO_HEADERS = "--header is sent to an HTTP server only (--url, --server, --reference); a stdio server takes its credentials from its environment"
STDIO_ENV = "--server-env is passed to a stdio server only (--stdio); evalcore starts no other server with your environment"
URL_AUTHORIZATION = "--header Authorization and a user:password in the URL would both set the request's credentials: give one of them"
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MANAGED_HEADERS = frozenset({"accept", "content-type", "content-length", "host", "last-event-id", "traceparent", "tracestate"})


def parse_header(text: str, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """`Name: value` (as `curl -H` takes it) -> (name, value); `${VAR}` in the value is read from the environment,
    so a token need not be on the command line."""
    env = os.environ if environ is None else environ
    match = _HEADER_LINE.match(text.strip())
    if match is None:
        name = (text.split(":")[0].split() or [""])[0]  # its first word only: the rest may be the credential
        raise ConfigError(f"--header {clip(name, 40)!r}...: expected 'Name: value', as curl -H takes it")
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


def parse_server_env(names: Sequence[str] | None, environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """Every `--server-env NAME`: (name, its value in evalcore's environment), in order."""
    env = os.environ if environ is None else environ
    passed: dict[str, str] = {}
    for name in names or ():
        if not _VARIABLE_NAME.fullmatch(name):
            raise ConfigError(f"--server-env {name.partition('=')[0]!r}: give a variable's name only; its value is read from evalcore's environment")
        if name not in env:
            raise ConfigError(f"--server-env {name}: the variable is not set in evalcore's environment")
        passed[name] = env[name]
    return tuple(passed.items())


def register_target_secrets(url: str | None = None, stdio: str | None = None, *, url_label: str = "--url", stdio_label: str = "--stdio") -> None:
    """Register the credentials written into a `--url` or a `--stdio` command as secrets (before anything quotes them),
    named after the option that gave them."""
    if url is not None:
        register_url_secrets(url, url_label)
    if stdio is not None:
        register_command_secrets(_words(stdio), stdio_label)


def _has_userinfo(url: str) -> bool:
    try:
        return "@" in urllib.parse.urlsplit(url).netloc
    except ValueError:  # a malformed URL is refused when it is opened
        return False


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: refused when the server starts; its words are still searched for keys
        return command.split()


@dataclass(frozen=True)
class Target:
    """The server under test: an HTTP endpoint or a command speaking stdio."""

    url: str | None = None
    stdio: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)  # sent on every HTTP request; secrets
    server_env: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)  # passed to a stdio server (--server-env)
    server: str | None = field(default=None, compare=False)  # the configured server (`--server NAME`) this endpoint is, started for a while

    def __post_init__(self) -> None:
        if (self.url is None) == (self.stdio is None):
            raise ValueError("give exactly one of url or stdio")
        if self.headers and self.url is None:
            raise ConfigError(
                "--header is sent to an HTTP server only (--url, --server, --reference); a stdio server takes its credentials from its environment"
            )
        if self.server_env and self.stdio is None:
            raise ConfigError(STDIO_ENV)
        register_target_secrets(self.url, self.stdio)
        for name, value in self.headers:
            register_secret(name, value)
        if self.url is not None and _has_userinfo(self.url) and any(name.lower() == "authorization" for name, _ in self.headers):
            raise ConfigError(URL_AUTHORIZATION)  # the HTTP client would refuse to send either

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def __str__(self) -> str:
        return self.url or f"stdio: {self.stdio}"

    def open(self, limits: Limits) -> Transport:
        if self.url is not None:
            return HttpTransport(self.url, limits, headers=dict(self.headers))
        assert self.stdio is not None
        return StdioTransport(self.stdio, limits, env=dict(self.server_env))


@contextlib.contextmanager
def resolve_target(
    *,
    url: str | None = None,
    stdio: str | None = None,
    server: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
    server_env: tuple[tuple[str, str], ...] = (),
) -> Iterator[Target]:
    """The Target for exactly one of `url`, `stdio` or a configured server name (started for the duration)."""
    if sum(x is not None for x in (url, stdio, server)) != 1:
        raise ConfigError("give exactly one of --url, --stdio or --server")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(f"--url must start with http:// or https://, got {url!r}")
    if server is None:
        yield Target(url=url, stdio=stdio, headers=headers, server_env=server_env)
        return
    if server_env:
        raise ConfigError(STDIO_ENV)
    if server not in CONFIGURED_SERVERS:
        raise ConfigError(f"unknown server {server!r}; configured: {', '.join(CONFIGURED_SERVERS)}")
    from evalcore.mcp.reference import running_reference_server

    with running_reference_server(REFERENCE_ARGS[server]) as reference_url:
        yield Target(url=reference_url, headers=headers, server=server)
