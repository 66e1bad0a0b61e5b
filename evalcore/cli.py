"""Command line: a thin layer over the library; domain errors become one-line messages and exit codes.

Exit codes: 0 success, 1 a gate failed (non-conformant server, findings),
2 usage or configuration error (with a one-line reason), 141 the reader of
the output went away (`evalcore runs | head`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import signal
import sys
from collections.abc import Sequence
from types import FrameType, ModuleType
from typing import NoReturn

import evalcore.commands
from evalcore import __version__
from evalcore.commands.options import Parser
from evalcore.errors import EvalcoreError

EXIT_OK, EXIT_GATE_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # as a shell reports a command ended by SIGPIPE


def command_modules() -> list[ModuleType]:
    """Every module of `evalcore.commands` that declares a command (a NAME), in their ORDER: a new command is one module there."""
    package = evalcore.commands
    modules = [importlib.import_module(f"{package.__name__}.{found.name}") for found in pkgutil.iter_modules(package.__path__)]
    return sorted((module for module in modules if hasattr(module, "NAME")), key=lambda module: module.ORDER)


def _command(commands: argparse._SubParsersAction[Parser], name: str, summary: str) -> Parser:
    """A subcommand whose --help opens with the same sentence the command list shows."""
    return commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")


def build_parser(prog: str = "evalcore") -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Evaluate MCP servers for protocol revision 2026-07-28.")
    parser.add_argument("--version", action="version", version=f"evalcore {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in command_modules():
        module.add_arguments(_command(commands, module.NAME, module.SUMMARY))
    return parser


def main(argv: Sequence[str] | None = None, *, prog: str = "evalcore") -> int:
    from evalcore.commands.malloc import limit_arenas
    from evalcore.processes import adopt_children
    from evalcore.redaction import redact_output_streams

    limit_arenas()  # before any thread of the command starts
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
    command = {module.NAME: module.command for module in command_modules()}[args.command]
    return int(command(args))
