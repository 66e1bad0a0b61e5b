"""Command: `python -m evalcore replay-calls RUN_ID` — a stored run's recorded tool calls sent to a server, answers diffed.

No model: the server's tool catalog is compared with the recorded one, then each recorded call goes to the server
again and its answer is compared exactly with the recorded one (`evalcore.behaviour.replay_calls`). Exit 0 when every
answer and the catalog are identical, 1 when any answer changed or errored or the catalog changed, 2 on usage errors
and when the server cannot be reached.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evalcore.commands.options import db_option, target_from_args, target_options
from evalcore.errors import ConfigError

NAME = "replay-calls"
SUMMARY = "send a stored run's recorded tool calls to a server (a new version) and diff the answers and its tool catalog, with no model"
ORDER = 25


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN_ID", help="the stored behaviour run whose recorded tool calls are sent")
    target_options(
        parser,
        url="Streamable HTTP endpoint of the server to send the calls to",
        stdio="command that starts the stdio server to send the calls to",
        server="a configured server, started for the replay: reference, or reference-v2 (the demo's server after its description change)",
        required=True,
    )
    db_option(parser, "DuckDB store holding the run")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the catalog's and every call's verdict, differences and both sides as JSON here")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds the server may take to answer one call (default 30)")


def command(args: argparse.Namespace) -> int:
    import asyncio

    from evalcore.behaviour.replay_calls import render_replay_calls, replay_calls
    from evalcore.mcp.transport.base import Limits
    from evalcore.store.behaviour import load_run
    from evalcore.store.exchanges import load_exchanges

    chosen = target_from_args(args)  # its secrets registered before any message quotes them
    if not 0 < args.timeout <= 600:
        raise ConfigError(f"--timeout must be between 0 and 600 seconds, got {args.timeout}")
    load_run(args.db, args.run_id)  # an unknown run: one line, exit 2
    exchanges = load_exchanges(args.db, args.run_id)
    if not any(exchange.method == "tools/call" for exchange in exchanges):
        raise ConfigError(f"run {args.run_id} in {args.db} recorded no tool call to send (or was made before evalcore recorded MCP exchanges)")
    with chosen.resolve() as target:
        report = asyncio.run(replay_calls(args.run_id, exchanges, target, Limits(read_timeout=args.timeout)))
    print(render_replay_calls(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    return 0 if report.identical else 1
