"""Command line: a thin layer over the library; domain errors become one-line messages and exit codes.

Exit codes: 0 success, 1 a gate failed (non-conformant server, findings),
2 usage or configuration error (with a one-line reason), 141 the reader of
the output went away (`evalcore runs | head`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import NoReturn

from evalcore import __version__
from evalcore.errors import ConfigError, EvalcoreError

DEFAULT_DB = Path("data/evals.duckdb")
EXIT_OK, EXIT_GATE_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # as a shell reports a command ended by SIGPIPE
HEADER_HELP = (
    "HTTP header sent on every request to the server, as curl -H takes it, e.g. 'Authorization: Bearer ${MCP_TOKEN}' "
    "(${VAR} is read from the environment); its value is a secret: redacted everywhere, never stored; repeatable"
)


SERVER_ENV_HELP = (
    "pass this variable of evalcore's environment to the stdio server (repeatable); the server gets only PATH, HOME, "
    "TMPDIR, the locale and these, never a provider key"
)


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line instead of a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(f"{self.prog}: {message} (see --help)")


def _command(commands: argparse._SubParsersAction[_Parser], name: str, summary: str) -> _Parser:
    """A subcommand whose --help opens with the same sentence the command list shows."""
    return commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")


def _provider_limit_options(parser: argparse.ArgumentParser) -> None:
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


def build_parser(prog: str = "evalcore") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Evaluate MCP servers for protocol revision 2026-07-28.")
    parser.add_argument("--version", action="version", version=f"evalcore {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    conformance = _command(commands, "conformance", "Layer 0: deterministic protocol conformance checks (no model)")
    target = conformance.add_mutually_exclusive_group()
    target.add_argument("--url", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    target.add_argument("--stdio", metavar="COMMAND", help='command that starts a stdio server, e.g. "python -m evalcore.demo_server --stdio"')
    target.add_argument("--reference", action="store_true", help="start the bundled reference server on 127.0.0.1 and check it")
    conformance.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'", help=HEADER_HELP)
    conformance.add_argument("--server-env", action="append", default=[], metavar="NAME", help=SERVER_ENV_HELP)
    conformance.add_argument("--runs", type=int, default=5, help="runs per check; a check passes only at runs/runs (default 5)")
    conformance.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report here")
    conformance.add_argument("--junit", type=Path, metavar="PATH", help="write JUnit XML here")
    conformance.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store to record the run in (default {DEFAULT_DB})")
    conformance.add_argument("--no-db", action="store_true", help="do not record the run")
    conformance.add_argument(
        "--call-tools",
        choices=("readonly", "all", "none"),
        default="readonly",
        help="which tools to call with schema-built arguments: those annotated readOnlyHint and not openWorldHint (default), all, or none",
    )
    conformance.add_argument("--timeout", type=float, default=10.0, help="seconds allowed for each answer (default 10)")
    conformance.add_argument("--deadline", type=float, default=300.0, help="seconds allowed for the whole suite (default 300)")
    conformance.add_argument(
        "--startup-timeout", type=float, default=20.0, help="stdio: extra seconds for the first answer of the freshly started server (default 20)"
    )
    conformance.add_argument("--only", metavar="PREFIX", action="append", help="run only checks whose id starts with PREFIX (repeatable)")
    conformance.add_argument("--list", action="store_true", dest="list_checks", help="list the checks and exit")
    conformance.add_argument("--strict", action="store_true", help="fail (exit 1) on SHOULD warnings too, not only on MUST failures")

    run = _command(commands, "run", "Layer 1: run a golden set through models with the server's tools, scored and stored")
    run.add_argument("--golden", type=Path, metavar="PATH", help="golden set YAML (default golden/tasks.yaml, here or the bundled one)")
    run.add_argument("--models", default="sim/lexical", help="comma-separated litellm model strings (default sim/lexical)")
    run_target = run.add_mutually_exclusive_group()
    run_target.add_argument("--server", metavar="NAME", help="a configured server: reference")
    run_target.add_argument("--url", help="Streamable HTTP endpoint of the server under test")
    run_target.add_argument("--stdio", metavar="COMMAND", help="command that starts a stdio server")
    run.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'", help=HEADER_HELP)
    run.add_argument("--server-env", action="append", default=[], metavar="NAME", help=SERVER_ENV_HELP)
    run.add_argument("--runs", type=int, default=5, help="attempts per case and model (default 5)")
    run.add_argument("--out", type=Path, metavar="PATH", help="write the JSON report here")
    run.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store (default {DEFAULT_DB})")
    run.add_argument("--concurrency", type=int, default=8, help="attempts in flight at once, all models together (default 8)")
    run.add_argument("--model-concurrency", type=int, default=4, help="attempts in flight per model (default 4)")
    run.add_argument("--cache", action="store_true", help="reuse stored attempts of unchanged cases on an unchanged server and model")
    run.add_argument("--resume", metavar="RUN_ID", help="finish a crashed or interrupted run without repeating its stored attempts")
    run.add_argument("--run-id", metavar="ID", help="id for the new run (default: time-based); lets a launcher follow it")
    run.add_argument("--judge", metavar="MODEL", help="litellm model that grades task completion against golden/rubric.md (e.g. sim/judge)")
    run.add_argument("--api-base", metavar="URL", help="api_base for the (non-sim) models, e.g. a local vLLM or Ollama endpoint")
    run.add_argument("--judge-api-base", metavar="URL", help="api_base for the judge when it is not the models' (default: --api-base)")
    run.add_argument("--prices", type=Path, metavar="PATH", help="YAML price table for custom models: {model: {input: USD/token, output: USD/token}}")
    run.add_argument("--timeout", type=float, default=60.0, help="seconds per model call (default 60)")
    run.add_argument("--max-steps", type=int, default=8, metavar="N", help="model turns an attempt may take before it stops at the step limit (default 8)")
    _provider_limit_options(run)
    run.add_argument("--fault-timeout", type=float, default=5.0, help="seconds before a call under an injected timeout fault gives up (default 5)")
    run.add_argument("--max-drop", type=float, default=0.02, help="run gate: largest tolerated metric drop below the last green run (default 0.02)")
    run.add_argument(
        "--max-error-rate",
        type=float,
        default=0.0,
        metavar="R",
        help="share of attempts that may error (provider or judge failure) and the run still pass its gate; it is never a baseline then (default 0)",
    )
    run.add_argument("--date", metavar="YYYY-MM-DD", help="the date the run stands for (default today)")
    run.add_argument("--require-case-gates", action="store_true", help="also exit 1 when a case misses its gate (hard 5/5, soft 4/5)")
    run.add_argument(
        "--golden-limit",
        action="append",
        default=[],
        metavar="NAME=N",
        help="raise or lower a golden-file limit (file_bytes, nodes, alias_nodes, depth, prompt_chars, cases; docs/golden.md); repeatable",
    )

    compare = _command(
        commands,
        "compare",
        "did a change help? run a golden set on a baseline and a candidate side by side, or take two stored runs, and test each case's difference exactly",
    )
    compare.add_argument("--golden", type=Path, metavar="PATH", help="golden set YAML both arms run (default golden/tasks.yaml, here or the bundled one)")
    compare.add_argument("--models", default="sim/lexical", help="comma-separated litellm model strings both arms run (default sim/lexical)")
    compare_target = compare.add_mutually_exclusive_group()
    compare_target.add_argument("--server", metavar="NAME", help="baseline: a configured server (reference, the default)")
    compare_target.add_argument("--url", help="baseline: Streamable HTTP endpoint")
    compare_target.add_argument("--stdio", metavar="COMMAND", help="baseline: command that starts a stdio server")
    compare.add_argument("--candidate-url", metavar="URL", help="candidate: another server's Streamable HTTP endpoint")
    compare.add_argument("--candidate-stdio", metavar="COMMAND", help="candidate: command that starts another stdio server")
    compare.add_argument(
        "--candidate-tools",
        type=Path,
        metavar="OVERRIDES.yaml",
        help="candidate: the baseline server, its tools shown to the models rewritten: tools: {TOOL: {description: ..., name: ...}}",
    )
    compare.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'", help=HEADER_HELP)
    compare.add_argument("--runs", type=int, default=10, help="attempts per case, model and arm (default 10)")
    compare.add_argument("--alpha", type=float, default=0.05, help="level of the tests, after the Benjamini-Hochberg correction (default 0.05)")
    compare.add_argument("--api-base", metavar="URL", help="api_base for the (non-sim) models, e.g. a local vLLM or Ollama endpoint")
    _provider_limit_options(compare)
    compare.add_argument("--baseline-run", metavar="RUN_ID", help="compare this stored run (with --candidate-run) instead of running new arms")
    compare.add_argument("--candidate-run", metavar="RUN_ID", help="the stored run to compare with --baseline-run")
    compare.add_argument("--json", type=Path, metavar="PATH", help="write the comparison as JSON here (docs/compare.schema.json)")
    compare.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store for both runs and the comparison (default {DEFAULT_DB})")
    compare.set_defaults(concurrency=8, model_concurrency=4, timeout=60.0)

    gate = _command(commands, "gate", "fail when a behaviour report dropped more than --max-drop below a baseline")
    gate.add_argument("--report", type=Path, required=True, metavar="PATH", help="the behaviour report to judge")
    gate.add_argument("--baseline", default="last-green", metavar="PATH|last-green", help="a baseline report file, or last-green from the store")
    gate.add_argument("--max-drop", type=float, default=0.02, help="largest tolerated drop of a metric (default 0.02)")
    gate.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"store that holds the last green run (default {DEFAULT_DB})")

    baseline = _command(commands, "baseline", "make a complete run the baseline of later runs of its golden set by hand")
    baseline_actions = baseline.add_subparsers(dest="action", required=True, parser_class=_Parser)
    accept = baseline_actions.add_parser("accept", help="accept RUN_ID as the baseline", description="Accept a complete run as the baseline by hand.")
    accept.add_argument("run_id", metavar="RUN_ID", help="the run to accept (`evalcore runs` lists them)")
    accept.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store (default {DEFAULT_DB})")

    runs = _command(commands, "runs", "list stored behaviour runs (crashed runs show as crashed) and processes a crashed run left behind")
    runs.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store (default {DEFAULT_DB})")
    runs.add_argument("--stop-leftovers", action="store_true", help="stop the processes an evalcore process that is gone left running")

    drift = _command(commands, "drift", "find persistent drops and recoveries of each case's pass rate in the stored history, with their cause")
    drift.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store (default {DEFAULT_DB})")
    drift.add_argument("--golden", type=Path, metavar="PATH", help="only runs of this golden set (as given to `run --golden`)")
    drift.add_argument("--json", type=Path, metavar="PATH", help="write the changes as JSON here")
    drift.add_argument("--min-baseline", type=int, metavar="N", help="runs before a change point for it to be tested (default 2, chosen by bench/drift_sim.py)")

    demo = _command(commands, "demo", "back-fill a simulated nightly history (sim models) into a fresh store, then check it for drift")
    demo.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store to create (default {DEFAULT_DB})")
    demo.add_argument("--golden", type=Path, metavar="PATH", help="golden set (default golden/tasks.yaml, here or the bundled one)")
    demo.add_argument("--days", type=int, default=21, help="nightly runs to simulate, ending today (default 21, at least 8)")
    demo.add_argument("--runs", type=int, default=5, help="attempts per case and model (default 5)")
    demo.add_argument("--force", action="store_true", help="delete the store first if it already holds runs")

    dashboard = _command(commands, "dashboard", "start the dashboard on 127.0.0.1 (first time: builds the simulated demo history too)")
    dashboard.add_argument("--db", type=Path, default=DEFAULT_DB, metavar="PATH", help=f"DuckDB store to show (default {DEFAULT_DB})")
    dashboard.add_argument("--port", type=int, default=8501, help="port on 127.0.0.1 (default 8501)")
    dashboard.add_argument("--no-demo", action="store_true", help="do not build the demo history into an empty store")

    summary = _command(commands, "ci-summary", "show a conformance or behaviour report in CI: step summary, step outputs, a PR-comment body")
    report = summary.add_mutually_exclusive_group(required=True)
    report.add_argument("--conformance", type=Path, metavar="PATH", help="a report `conformance --json` wrote")
    report.add_argument("--behaviour", type=Path, metavar="PATH", help="a report `run --out` wrote")
    summary.add_argument(
        "--db",
        type=Path,
        default=DEFAULT_DB,
        metavar="PATH",
        help=f"store holding the last green run the behaviour run was gated against (default {DEFAULT_DB})",
    )
    summary.add_argument("--comment", type=Path, metavar="PATH", help="behaviour: also write the PR-comment body (the delta against the last green run) here")

    scan = _command(commands, "migrate-scan", "find pre-2026 MCP patterns in test code and say what replaces them")
    scan.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories to scan")
    return parser


def main(argv: Sequence[str] | None = None, *, prog: str = "evalcore") -> int:
    from evalcore.processes import adopt_children
    from evalcore.redaction import redact_output_streams

    redact_output_streams()  # what a command prints (also a background job's log) never carries a secret
    adopt_children()  # what this command starts ends with it (evalcore.processes)
    try:
        try:
            code = _dispatch(build_parser(prog).parse_args(argv))
        except SystemExit as stop:  # --help and --version print, then stop here
            code = stop.code if isinstance(stop.code, int) else EXIT_OK
        sys.stdout.flush()  # here, so a closed pipe is met inside the handler below, not at interpreter exit
        return code
    except BrokenPipeError:
        # `evalcore runs | head`: the reader has all it wanted. Further writes (and the exit-time flush) go nowhere.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except EvalcoreError as exc:
        for line in str(exc).splitlines() or [type(exc).__name__]:  # one line per problem (e.g. per model)
            print(f"error: {line}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _stop_like_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a CI timeout, `kill`) stops as Ctrl-C does: the run is marked cancelled, and the servers it started
    stop with it, where the default would end the process on the spot and leave them running."""
    raise KeyboardInterrupt


def entry_point(prog: str) -> NoReturn:
    signal.signal(signal.SIGTERM, _stop_like_ctrl_c)
    sys.exit(main(prog=prog))


def console_main() -> NoReturn:
    """The installed `evalcore` command."""
    entry_point("evalcore")


def console_main_mcp_evalcore() -> NoReturn:
    """The installed `mcp-evalcore` command: the same, under the distribution's name."""
    entry_point("mcp-evalcore")


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "conformance":
        from evalcore.commands.conformance import run_conformance_command

        return run_conformance_command(args)
    if args.command == "run":
        from evalcore.commands.run import run_behaviour_command

        return run_behaviour_command(args)
    if args.command == "compare":
        from evalcore.commands.compare import run_compare_command

        return run_compare_command(args)
    if args.command == "gate":
        from evalcore.commands.gate import run_gate_command

        return run_gate_command(args)
    if args.command == "baseline":
        from evalcore.commands.gate import accept_baseline_command

        return accept_baseline_command(args)
    if args.command == "runs":
        from evalcore.commands.run import list_runs_command

        return list_runs_command(args)
    if args.command == "drift":
        from evalcore.commands.drift import run_drift_command

        return run_drift_command(args)
    if args.command == "demo":
        from evalcore.commands.demo import run_demo_command

        return run_demo_command(args)
    if args.command == "dashboard":
        from evalcore.commands.dashboard import run_dashboard_command

        return run_dashboard_command(args)
    if args.command == "ci-summary":
        from evalcore.commands.ci_summary import run_ci_summary_command

        return run_ci_summary_command(args)
    if args.command == "migrate-scan":
        from evalcore.commands.migrate_scan import run_migrate_scan_command

        return run_migrate_scan_command(args)
    raise ConfigError(f"unknown command {args.command!r}")
