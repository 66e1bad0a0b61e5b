"""Command line: what several commands declare alike (the store's default path, shared option texts, the provider
limits) and the parser class every command's parser is made of. Not a command: it has no NAME."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalcore.errors import ConfigError

DEFAULT_DB = Path("data/evals.duckdb")
HEADER_HELP = (
    "HTTP header sent on every request to the server, as curl -H takes it, e.g. 'Authorization: Bearer ${MCP_TOKEN}' "
    "(${VAR} is read from the environment); its value is a secret: redacted everywhere, never stored; repeatable"
)
SERVER_ENV_HELP = (
    "pass this variable of evalcore's environment to the stdio server (repeatable); the server gets only PATH, HOME, "
    "TMPDIR, the locale and these, never a provider key"
)


class Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line instead of a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(f"{self.prog}: {message} (see --help)")


def provider_limit_options(parser: argparse.ArgumentParser) -> None:
    """The per-provider limits of model calls (`run` and `compare` call providers alike)."""
    parser.add_argument(
        "--max-connections",
        action="append",
        default=[],
        metavar="[PROVIDER=]N",
        help="model calls in flight at once per provider (openai=4) or per api_base URL; N alone: every provider; repeatable",
    )
    parser.add_argument(
        "--requests-per-minute",
        action="append",
        default=[],
        metavar="[PROVIDER=]N",
        help="request rate per provider or api_base, a token bucket holding one second's worth; N alone: every provider; repeatable",
    )
    parser.add_argument(
        "--rate-limit-wait",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long one model call may wait out a provider's 429 Retry-After before it is a provider error (default 300)",
    )


def db_option(parser: argparse.ArgumentParser, store: str) -> None:
    """`--db PATH`, its help the store's role in this command (e.g. "DuckDB store to show") and the default."""
    parser.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"{store} (default {DEFAULT_DB})")
