"""Command: `evalcore draft` — a first golden set written from the server's own tools, every case a draft to review."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path
from typing import TextIO

from evalcore.commands.options import db_option, target_from_args, target_options
from evalcore.errors import ConfigError

NAME = "draft"
SUMMARY = "draft a golden set from a server's tools with a model (sim/drafter offline); every case a draft to review"
ORDER = 14


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target_options(parser, reference="start the bundled reference server on 127.0.0.1 and draft for it")
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="litellm model string that writes the drafts (sim/drafter: offline, simulated); with --from-run: only this model's attempts",
    )
    parser.add_argument(
        "--from-run",
        metavar="RUN_ID",
        help="draft from a recorded run instead: each case's first passed attempt (its prompt, calls and the server's answers) as a case",
    )
    parser.add_argument("--case", metavar="CASE_ID", help="with --from-run: only this case, from its first attempt whatever it came to")
    db_option(parser, "DuckDB store holding the --from-run run")
    parser.add_argument("--api-base", metavar="URL", help="api_base for the model, e.g. a local vLLM or Ollama endpoint")
    parser.add_argument("--per-tool", type=int, default=2, metavar="N", help="positive cases asked for per tool (default 2)")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write the drafted golden set here (default: print it); an existing file is never overwritten")
    parser.add_argument(
        "--call-tools",
        choices=("readonly", "all", "none"),
        default="readonly",
        help="make each draft's expected call on the server: readonly (tools marked readOnlyHint; default), all, or none; "
        "a server error drops the draft, the answer is kept beside the case",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds allowed for the model's answer and each tool call (default 60)")


def command(args: argparse.Namespace) -> int:
    import asyncio

    from evalcore.behaviour.drafting import draft_golden, render_drafts
    from evalcore.models.adapter import start_litellm_import
    from evalcore.models.preflight import check_models
    from evalcore.models.types import ModelSpec
    from evalcore.paths import model_identity
    from evalcore.redaction import register_url_secrets

    if args.out is not None and args.out.exists():
        raise ConfigError(f"--out {args.out} exists; drafts never overwrite a golden set: choose a new file")
    if args.from_run:
        return _from_run(args)
    if args.case:
        raise ConfigError("--case goes with --from-run (a case of a recorded run)")
    if not args.model:
        raise ConfigError("draft: --model is required (the model that writes the drafts, e.g. sim/drafter), unless --from-run")
    chosen = target_from_args(args)
    if not chosen.given:
        raise ConfigError("draft: one of the arguments --url --stdio --server --reference is required (see --help)")
    if args.per_tool < 1:
        raise ConfigError(f"--per-tool must be at least 1, got {args.per_tool}")
    if args.api_base:
        register_url_secrets(args.api_base, "--api-base")
    name = model_identity(args.model.strip())
    spec = ModelSpec(name=name, api_base=None if name.startswith("sim/") else args.api_base, timeout_s=args.timeout)
    start_litellm_import([spec])
    check_models([spec])  # before the server starts
    with chosen.resolve() as target:
        result = asyncio.run(draft_golden(target, spec, per_tool=args.per_tool, call_tools=args.call_tools, today=date.today()))
    if not result.kept:
        raise ConfigError(f"no draft passed its checks ({len(result.dropped)} dropped); the first: {result.dropped[0].reason if result.dropped else 'none'}")
    report = _write(args.out, render_drafts(result, server=chosen.server))
    label = " (simulated)" if result.simulated else ""
    print(f"drafted {len(result.kept)} case(s) with {result.model}{label}{f' into {args.out}' if args.out else ''}", file=report)
    for dropped in result.dropped:
        print(f"dropped {dropped.case_id}: {dropped.reason}", file=report)
    print(result.coverage.summary(), file=report)
    return 0


def _write(out: Path | None, text: str) -> TextIO:
    """Print the drafts, or write them to `out`; where the report goes (stderr when the drafts are printed)."""
    if out is None:
        print(text, end="")
        return sys.stderr
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return sys.stdout


def _from_run(args: argparse.Namespace) -> int:
    from evalcore.behaviour.draft_from_run import drafts_from_run
    from evalcore.behaviour.drafting import loadable, render_drafts_text

    today = date.today().isoformat()
    drafts, tool_names = drafts_from_run(args.db, args.from_run, model=args.model, case=args.case, today=date.today())
    kept, dropped = loadable(drafts, [], [{"name": name} for name in tool_names], "", today)
    if not kept:
        raise ConfigError(f"no case of run {args.from_run} could be drafted; the first: {dropped[0].reason if dropped else 'none'}")
    origin = f"Drafted from run {args.from_run} on {today}: what the model did, the calls it made and the server's answers."
    report = _write(args.out, render_drafts_text(kept, model="", at=today, server=None, simulated=False, tools=len(tool_names), origin=origin))
    print(f"drafted {len(kept)} case(s) from run {args.from_run}{f' into {args.out}' if args.out else ''}", file=report)
    for item in dropped:
        print(f"dropped {item.case_id}: {item.reason}", file=report)
    return 0
