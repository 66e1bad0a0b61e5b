"""Command line: what several commands declare alike (the store's default path, the server under test, the models,
the provider limits) and the parser class every command's parser is made of. Not a command: it has no NAME.

The server under test (`target_options`, `target_from_args`) and the models (`model_options`, `model_specs_from_args`,
`judge_spec_from_args`) are declared and read here only, so every command that takes them registers the credentials
written into them (a `--url`'s or an `--api-base`'s userinfo and `?key=`, a `--stdio` command's keys, each `--header`
value, a `--server-env` credential) as secrets before anything can quote them: the store, the report files and the
output never carry them (`evalcore.redaction`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.errors import ConfigError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from evalcore.mcp.target import Target
    from evalcore.models.limits import LimitsTable
    from evalcore.models.types import ModelSpec
    from evalcore.scoring.agreement import StatusThresholds

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


# --- the server under test ------------------------------------------------------------------------------------------

URL_HELP = "Streamable HTTP endpoint of the server under test"
STDIO_HELP = "command that starts a stdio server"
SERVER_HELP = "a configured server: reference"


def target_options(
    parser: argparse.ArgumentParser,
    *,
    url: str = URL_HELP,
    stdio: str = STDIO_HELP,
    server: str | None = SERVER_HELP,
    reference: str | None = None,
    server_env: bool = True,
    required: bool = False,
) -> None:
    """The server under test: `--url`, `--stdio` and (`server` given) `--server NAME` or (`reference` given) `--reference`,
    one of them at most (`required`: exactly one), each with the help text given; then `--header` and (`server_env`)
    `--server-env`. `target_from_args` reads them."""
    group = parser.add_mutually_exclusive_group(required=required)
    if server is not None:
        group.add_argument("--server", metavar="NAME", help=server)
    group.add_argument("--url", help=url)
    group.add_argument("--stdio", metavar="COMMAND", help=stdio)
    if reference is not None:
        group.add_argument("--reference", action="store_true", help=reference)
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'", help=HEADER_HELP)
    if server_env:
        parser.add_argument("--server-env", action="append", default=[], metavar="NAME", help=SERVER_ENV_HELP)


@dataclass(frozen=True)
class TargetChoice:
    """The server the options name (at most one of url, stdio, server; `--reference` is the server `reference`), with the
    headers to send it and the variables to pass it, read and checked. Its secrets are registered: see `target_from_args`."""

    url: str | None = None
    stdio: str | None = None
    server: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # sent on every HTTP request; secrets
    server_env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # passed to a stdio server

    @property
    def given(self) -> bool:
        return self.url is not None or self.stdio is not None or self.server is not None

    def resolve(self, default_server: str | None = None) -> AbstractContextManager[Target]:
        """The Target (a configured server started for the duration); `default_server` when the options named none."""
        from evalcore.mcp.target import resolve_target

        server = self.server if self.given else default_server
        return resolve_target(url=self.url, stdio=self.stdio, server=server, headers=self.headers, server_env=self.server_env)


def target_from_args(args: argparse.Namespace) -> TargetChoice:
    """The server `target_options` declared, checked with one-line errors. Every credential in it is registered as a
    secret first: the `--url`'s and the `--stdio` command's, then each `--header` value and each `--server-env`
    credential (a credential variable's value, a URL's userinfo and `?key=`) as it is read."""
    from evalcore.mcp.target import STDIO_ENV, STDIO_HEADERS, parse_headers, parse_server_env, register_target_secrets
    from evalcore.redaction import register_command_secrets, register_secret

    url, stdio = getattr(args, "url", None), getattr(args, "stdio", None)
    server = "reference" if getattr(args, "reference", False) else getattr(args, "server", None)
    header_texts, server_env_names = getattr(args, "header", None) or [], getattr(args, "server_env", None) or []
    register_target_secrets(url, stdio)  # before any message quotes them
    if header_texts and stdio is not None:
        raise ConfigError(STDIO_HEADERS)
    headers = parse_headers(header_texts)
    for name, value in headers:
        register_secret(name, value)
    if server_env_names and stdio is None:
        raise ConfigError(STDIO_ENV)
    server_env = parse_server_env(server_env_names)
    register_command_secrets([f"{name}={value}" for name, value in server_env], "--server-env")
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(f"--url must start with http:// or https://, got {url!r}")
    return TargetChoice(url=url, stdio=stdio, server=server, headers=headers, server_env=server_env)


# --- the models -----------------------------------------------------------------------------------------------------

MODELS_HELP = "comma-separated litellm model strings (default sim/lexical)"


def model_options(parser: argparse.ArgumentParser, *, judge: bool = False, models: str = MODELS_HELP) -> None:
    """`--models` (its help `models`) and `--api-base`; with `judge`, `--judge` and `--judge-api-base` too."""
    parser.add_argument("--models", default="sim/lexical", help=models)
    if judge:
        parser.add_argument("--judge", metavar="MODEL", help="litellm model that grades task completion against golden/rubric.md (e.g. sim/judge)")
    parser.add_argument("--api-base", metavar="URL", help="api_base for the (non-sim) models, e.g. a local vLLM or Ollama endpoint")
    if judge:
        parser.add_argument("--judge-api-base", metavar="URL", help="api_base for the judge when it is not the models' (default: --api-base)")


def register_model_secrets(args: argparse.Namespace) -> None:
    """The credentials written into `--api-base` and `--judge-api-base` (userinfo, `?key=`), as secrets."""
    from evalcore.redaction import register_url_secrets

    for option, api_base in (("--api-base", getattr(args, "api_base", None)), ("--judge-api-base", getattr(args, "judge_api_base", None))):
        if api_base:
            register_url_secrets(api_base, option)


def model_specs_from_args(args: argparse.Namespace, models: str | None = None) -> tuple[ModelSpec, ...]:
    """The models of `--models` (or of `models`, e.g. a `--paraphrase-model`), each at `--api-base` unless it is a
    `sim/` one, with the command's `--model-concurrency`, `--timeout` and provider limits. Registers the endpoints'
    credentials first."""
    from evalcore.models.limits import provider_key
    from evalcore.models.types import ModelSpec
    from evalcore.paths import model_identity

    register_model_secrets(args)
    text = args.models if models is None else models
    names = [model_identity(name.strip()) for name in text.split(",") if name.strip()]
    if not names:
        raise ConfigError("--models names no model; e.g. --models sim/lexical,openai/gpt-4o-mini")
    if len(set(names)) != len(names):
        raise ConfigError(f"--models lists a model twice: {text}")
    limits = provider_limits(args)
    specs = []
    for name in names:
        api_base = None if name.startswith("sim/") else args.api_base
        limited = limits.for_provider(provider_key(name, api_base))
        specs.append(ModelSpec(name=name, api_base=api_base, max_concurrency=args.model_concurrency, timeout_s=args.timeout, limits=limited))
    return tuple(specs)


def judge_spec_from_args(args: argparse.Namespace) -> ModelSpec | None:
    """The judge goes where the models go: `--judge-api-base`, else `--api-base` (a `sim/` judge needs neither).
    Registers the endpoints' credentials first."""
    register_model_secrets(args)
    if not args.judge:
        return None
    from evalcore.models.limits import provider_key
    from evalcore.models.types import ModelSpec

    api_base = None if args.judge.startswith("sim/") else (getattr(args, "judge_api_base", None) or args.api_base)
    limits = provider_limits(args).for_provider(provider_key(args.judge, api_base))
    return ModelSpec(name=args.judge, api_base=api_base, timeout_s=args.timeout, limits=limits)


def provider_limits(args: argparse.Namespace) -> LimitsTable:
    """`--max-connections`, `--requests-per-minute` and `--rate-limit-wait`, per provider (evalcore.models.limits)."""
    from evalcore.models.limits import parse_limits

    return parse_limits(args.max_connections, args.requests_per_minute, max_wait_s=args.rate_limit_wait)


# --- the judge's standing ------------------------------------------------------------------------------------------


def judge_threshold_options(parser: argparse.ArgumentParser, *, policy: bool = False) -> None:
    """When a judge is uncalibrated, unreliable or trusted (evalcore.scoring.agreement.StatusThresholds): `run` and `judge-agreement`."""
    if policy:
        parser.add_argument(
            "--judge-policy",
            choices=("always", "trusted"),
            default="always",
            help="always: the judge's verdicts enter pass and the gate (default); trusted: only a judge whose agreement with human labels is trusted does",
        )
    parser.add_argument("--judge-min-labels", type=int, default=30, metavar="N", help="labels below which a judge is uncalibrated (default 30)")
    parser.add_argument("--judge-unreliable-below", type=float, default=0.4, metavar="K", help="κ below which a judge is unreliable (default 0.4)")
    parser.add_argument("--judge-trusted-min-labels", type=int, default=50, metavar="N", help="labels a trusted judge needs at least (default 50)")
    parser.add_argument(
        "--judge-trusted-lower-bound",
        type=float,
        default=0.6,
        metavar="K",
        help="the lowest lower bound of κ's 95%% interval a trusted judge may have (default 0.6)",
    )


def judge_thresholds_from_args(args: argparse.Namespace) -> StatusThresholds:
    from evalcore.scoring.agreement import StatusThresholds

    thresholds = StatusThresholds(args.judge_min_labels, args.judge_unreliable_below, args.judge_trusted_min_labels, args.judge_trusted_lower_bound)
    if thresholds.min_labels < 0 or thresholds.trusted_min_labels < thresholds.min_labels:
        raise ConfigError("--judge-trusted-min-labels must be at least --judge-min-labels, and both at least 0")
    if not -1 <= thresholds.unreliable_below <= 1 or not -1 <= thresholds.trusted_lower_bound <= 1:
        raise ConfigError("--judge-unreliable-below and --judge-trusted-lower-bound are κ values, between -1 and 1")
    return thresholds
