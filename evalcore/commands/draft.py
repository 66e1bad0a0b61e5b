"""Command: `evalcore draft` — a first golden set written from the server's own tools, every case a draft to review."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

from evalcore.commands.options import target_from_args, target_options
from evalcore.errors import ConfigError

NAME = "draft"
SUMMARY = "draft a golden set from a server's tools with a model (sim/drafter offline); every case a draft to review"
ORDER = 14


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target_options(parser, reference="start the bundled reference server on 127.0.0.1 and draft for it")
    parser.add_argument("--model", required=True, metavar="MODEL", help="litellm model string that writes the drafts (sim/drafter: offline, simulated)")
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

    chosen = target_from_args(args)
    if not chosen.given:
        raise ConfigError("draft: one of the arguments --url --stdio --server --reference is required (see --help)")
    if args.per_tool < 1:
        raise ConfigError(f"--per-tool must be at least 1, got {args.per_tool}")
    if args.out is not None and args.out.exists():
        raise ConfigError(f"--out {args.out} exists; drafts never overwrite a golden set: choose a new file")
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
    text = render_drafts(result, server=chosen.server)
    report = sys.stderr if args.out is None else sys.stdout
    if args.out is None:
        print(text, end="")
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    label = " (simulated)" if result.simulated else ""
    print(f"drafted {len(result.kept)} case(s) with {result.model}{label}{f' into {args.out}' if args.out else ''}", file=report)
    for dropped in result.dropped:
        print(f"dropped {dropped.case_id}: {dropped.reason}", file=report)
    print(result.coverage.summary(), file=report)
    return 0
