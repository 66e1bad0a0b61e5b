"""Command: `python -m evalcore conformance` — run Layer 0 and report it."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.commands.options import db_option, target_from_args, target_options
from evalcore.errors import ConfigError

if TYPE_CHECKING:
    from evalcore.mcp.target import Target

NAME = "conformance"
SUMMARY = "Layer 0: deterministic protocol conformance checks (no model)"
ORDER = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target_options(
        parser,
        url="Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp",
        stdio='command that starts a stdio server, e.g. "python -m evalcore.demo_server --stdio"',
        server=None,
        reference="start the bundled reference server on 127.0.0.1 and check it",
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per check; a check passes only at runs/runs (default 5)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report here")
    parser.add_argument("--junit", type=Path, metavar="PATH", help="write JUnit XML here")
    db_option(parser, "DuckDB store to record the run in")
    parser.add_argument("--no-db", action="store_true", help="do not record the run")
    parser.add_argument(
        "--call-tools",
        choices=("readonly", "all", "none"),
        default="readonly",
        help="which tools to call with schema-built arguments: those annotated readOnlyHint and not openWorldHint (default), all, or none",
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds allowed for each answer (default 10)")
    parser.add_argument("--deadline", type=float, default=300.0, help="seconds allowed for the whole suite (default 300)")
    parser.add_argument(
        "--startup-timeout", type=float, default=20.0, help="stdio: extra seconds for the first answer of the freshly started server (default 20)"
    )
    parser.add_argument(
        "--foreign-token",
        metavar="TOKEN",
        help="a bearer token your authorization server issued for another resource, which a protected server must refuse "
        "with 401 (${VAR} is read from the environment); its value is a secret: redacted everywhere, never stored",
    )
    parser.add_argument(
        "--requirements",
        metavar="REVISION",
        help="also report the official conformance suite's requirement set for REVISION (2026-07-28) scenario by scenario: "
        "which of our checks cover each official scenario and their verdict (the suite's verdict and exit code are unchanged)",
    )
    parser.add_argument("--only", metavar="PREFIX", action="append", help="run only checks whose id starts with PREFIX (repeatable)")
    parser.add_argument("--list", action="store_true", dest="list_checks", help="list the checks and exit")
    parser.add_argument("--strict", action="store_true", help="fail (exit 1) on SHOULD warnings too, not only on MUST failures")


def command(args: argparse.Namespace) -> int:
    from evalcore.conformance.registry import all_checks

    if args.list_checks:
        for check in all_checks():
            scope = "http" if check.http_only else "http+stdio"
            eras = "+".join(era.split("-")[0] for era in check.eras)
            print(f"{check.id:<45} {check.level:<6} {scope:<10} {eras:<11} {check.title}")
        return 0
    chosen = target_from_args(args)  # its secrets registered before any message quotes them
    args.foreign_token = _foreign_token(args.foreign_token)
    if not chosen.given:
        raise ConfigError("conformance: one of the arguments --url --stdio --reference is required (see --help)")
    if args.runs < 1:
        raise ConfigError(f"--runs must be at least 1, got {args.runs}")
    if args.timeout <= 0 or args.deadline <= 0 or args.startup_timeout < 0:
        raise ConfigError("--timeout and --deadline must be positive, --startup-timeout at least 0")
    prefixes = tuple(args.only or ())
    if args.foreign_token is not None and chosen.stdio is not None:
        raise ConfigError("--foreign-token applies over HTTP (--url), not to a --stdio server, which takes no token")
    if prefixes and not any(check.id.startswith(prefixes) for check in all_checks()):
        raise ConfigError(f"--only {' '.join(prefixes)} matches no check (see --list)")
    if args.requirements is not None:
        from evalcore.conformance.requirements import load

        args.requirements = load(args.requirements)  # an unknown revision is refused before any server starts
    with chosen.resolve() as target:  # --reference: the bundled server, started for the duration
        return _run(args, target)


FOREIGN_TOKEN_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _foreign_token(text: str | None) -> str | None:
    """The `--foreign-token` value (`${VAR}` read from the environment, a leading `Bearer ` dropped), registered as a secret."""
    from evalcore.redaction import register_secret

    if text is None:
        return None

    def variable(found: re.Match[str]) -> str:
        if found[1] not in os.environ:
            raise ConfigError(f"--foreign-token: the environment variable {found[1]} in its value is not set")
        return os.environ[found[1]]

    token = FOREIGN_TOKEN_VARIABLE.sub(variable, text).strip()
    if token.lower().startswith("bearer "):
        token = token[len("bearer ") :].strip()
    register_secret("--foreign-token", f"Bearer {token}")  # the header value and its token, before anything can quote them
    if not token:
        raise ConfigError("--foreign-token is empty: give a token issued for another resource")
    return token


def _run(args: argparse.Namespace, target: Target) -> int:
    import asyncio

    from evalcore.conformance.report import exit_code, render_table, write_json, write_junit
    from evalcore.conformance.runner import run_suite
    from evalcore.mcp.transport.base import Limits

    prefixes = tuple(args.only or ())
    only = (lambda check: check.id.startswith(prefixes)) if prefixes else None
    limits = Limits(connect_timeout=min(5.0, args.timeout), read_timeout=args.timeout, startup_timeout=args.startup_timeout)
    report = asyncio.run(
        run_suite(target, runs=args.runs, limits=limits, tool_policy=args.call_tools, deadline_s=args.deadline, only=only, foreign_token=args.foreign_token)
    )
    print(render_table(report, full_reasons=not sys.stdout.isatty()))  # a CI log or a file is where reasons are read whole
    view = None
    if args.requirements is not None:
        from evalcore.conformance.requirement_view import judge, render

        view = judge(args.requirements, report)
        print()
        print(render(view, whole_rows=not sys.stdout.isatty()))
    if args.json:
        write_json(report, args.json, view)
    if args.junit:
        write_junit(report, args.junit, view)
    if not args.no_db:
        from evalcore.store.conformance import record_conformance_run

        run_id = record_conformance_run(args.db, report)
        print(f"recorded as conformance run {run_id} in {args.db}", file=sys.stderr)
    return exit_code(report, strict=args.strict)
