"""Command: `python -m evalcore conformance` — run Layer 0 and report it."""

from __future__ import annotations

import argparse
import asyncio
import sys

from evalcore.conformance.registry import all_checks
from evalcore.conformance.report import exit_code, render_table, write_json, write_junit
from evalcore.conformance.runner import run_suite
from evalcore.errors import ConfigError
from evalcore.target import STDIO_ENV, STDIO_HEADERS, Target, parse_headers, parse_server_env, register_target_secrets
from evalcore.transport.base import Limits


def run_conformance_command(args: argparse.Namespace) -> int:
    if args.list_checks:
        for check in all_checks():
            scope = "http" if check.http_only else "http+stdio"
            eras = "+".join(era.split("-")[0] for era in check.eras)
            print(f"{check.id:<45} {check.level:<6} {scope:<10} {eras:<11} {check.title}")
        return 0
    register_target_secrets(args.url, args.stdio)  # before any message quotes them
    if not (args.url or args.stdio or args.reference):
        raise ConfigError("conformance: one of the arguments --url --stdio --reference is required (see --help)")
    if args.runs < 1:
        raise ConfigError(f"--runs must be at least 1, got {args.runs}")
    if args.timeout <= 0 or args.deadline <= 0 or args.startup_timeout < 0:
        raise ConfigError("--timeout and --deadline must be positive, --startup-timeout at least 0")
    if args.url is not None and not args.url.startswith(("http://", "https://")):
        raise ConfigError(f"--url must start with http:// or https://, got {args.url!r}")
    if args.header and args.stdio:
        raise ConfigError(STDIO_HEADERS)
    args.headers = parse_headers(args.header)
    if args.server_env and not args.stdio:
        raise ConfigError(STDIO_ENV)
    args.server_env_values = parse_server_env(args.server_env)
    prefixes = tuple(args.only or ())
    if prefixes and not any(check.id.startswith(prefixes) for check in all_checks()):
        raise ConfigError(f"--only {' '.join(prefixes)} matches no check (see --list)")
    if args.reference:
        from evalcore.reference import running_reference_server

        with running_reference_server() as url:
            args.url = url
            return _run(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    target = Target(url=args.url, stdio=args.stdio, headers=args.headers, server_env=args.server_env_values)
    prefixes = tuple(args.only or ())
    only = (lambda check: check.id.startswith(prefixes)) if prefixes else None
    limits = Limits(connect_timeout=min(5.0, args.timeout), read_timeout=args.timeout, startup_timeout=args.startup_timeout)
    report = asyncio.run(run_suite(target, runs=args.runs, limits=limits, tool_policy=args.call_tools, deadline_s=args.deadline, only=only))
    print(render_table(report, full_reasons=not sys.stdout.isatty()))  # a CI log or a file is where reasons are read whole
    if args.json:
        write_json(report, args.json)
    if args.junit:
        write_junit(report, args.junit)
    if not args.no_db:
        from evalcore.store.conformance import record_conformance_run

        run_id = record_conformance_run(args.db, report)
        print(f"recorded as conformance run {run_id} in {args.db}", file=sys.stderr)
    return exit_code(report, strict=args.strict)
