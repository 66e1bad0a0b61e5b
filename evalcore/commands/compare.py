"""Command: `python -m evalcore compare` — did my change help? Two arms of one golden set, exact tests, a verdict.

Exit codes: 0 when no (model, case) and no model is significantly worse, 1
when one is (or an arm scored nothing for it, so it was not measured), 2 on
usage errors (none or two candidates, an override of a tool the server does
not list, an unknown stored run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.commands.options import db_option, model_options, model_specs_from_args, provider_limit_options, target_from_args, target_options
from evalcore.errors import ConfigError

if TYPE_CHECKING:
    from evalcore.compare.verdicts import Comparison

NAME = "compare"
SUMMARY = "did a change help? run a golden set on a baseline and a candidate side by side, or take two stored runs, and test each case's difference exactly"
ORDER = 30
CANDIDATES = "--candidate-url, --candidate-stdio or --candidate-tools"
LIVE_OPTIONS = ("golden", "url", "stdio", "server", "candidate_url", "candidate_stdio", "candidate_tools")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--golden", type=Path, metavar="PATH", help="golden set YAML both arms run (default golden/tasks.yaml, here or the bundled one)")
    model_options(parser, models="comma-separated litellm model strings both arms run (default sim/lexical)")
    target_options(
        parser,
        server="baseline: a configured server (reference, the default)",
        url="baseline: Streamable HTTP endpoint",
        stdio="baseline: command that starts a stdio server",
        server_env=False,
    )
    parser.add_argument("--candidate-url", metavar="URL", help="candidate: another server's Streamable HTTP endpoint")
    parser.add_argument("--candidate-stdio", metavar="COMMAND", help="candidate: command that starts another stdio server")
    parser.add_argument(
        "--candidate-tools",
        type=Path,
        metavar="OVERRIDES.yaml",
        help="candidate: the baseline server, its tools shown to the models rewritten: tools: {TOOL: {description: ..., name: ...}}",
    )
    parser.add_argument("--runs", type=int, default=10, help="attempts per case, model and arm (default 10)")
    parser.add_argument("--alpha", type=float, default=0.05, help="level of the tests, after the Benjamini-Hochberg correction (default 0.05)")
    provider_limit_options(parser)
    parser.add_argument("--baseline-run", metavar="RUN_ID", help="compare this stored run (with --candidate-run) instead of running new arms")
    parser.add_argument("--candidate-run", metavar="RUN_ID", help="the stored run to compare with --baseline-run")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the comparison as JSON here (docs/compare.schema.json)")
    db_option(parser, "DuckDB store for both runs and the comparison")
    parser.set_defaults(concurrency=8, model_concurrency=4, timeout=60.0)


def command(args: argparse.Namespace) -> int:
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must lie strictly between 0 and 1, got {args.alpha}")
    stored = args.baseline_run is not None or args.candidate_run is not None
    comparison = _compare_stored(args) if stored else _compare_live(args)
    from evalcore.compare.render import render_comparison
    from evalcore.store.comparisons import write_comparison

    report = comparison.to_json()
    write_comparison(
        args.db,
        comparison_id=comparison.comparison_id,
        baseline_run_id=comparison.baseline_run_id,
        candidate_run_id=comparison.candidate_run_id,
        candidate_kind=str(comparison.candidate["kind"]),
        candidate=json.dumps(comparison.candidate),
        alpha=comparison.alpha,
        failed=bool(comparison.failed),
        report=report,
    )
    print(render_comparison(comparison))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if comparison.failed else 0


def _compare_stored(args: argparse.Namespace) -> Comparison:
    if args.baseline_run is None or args.candidate_run is None:
        raise ConfigError("comparing stored runs needs both --baseline-run and --candidate-run")
    given = [f"--{name.replace('_', '-')}" for name in LIVE_OPTIONS if getattr(args, name) is not None]
    if given:
        raise ConfigError(f"{given[0]} runs a new comparison; it does not combine with --baseline-run and --candidate-run")
    from evalcore.compare.stored import stored_comparison
    from evalcore.store.behaviour import new_run_id

    return stored_comparison(args.db, args.baseline_run, args.candidate_run, alpha=args.alpha, comparison_id=f"cmp-{new_run_id()}")


def _compare_live(args: argparse.Namespace) -> Comparison:
    candidates = [name for name in ("candidate_url", "candidate_stdio", "candidate_tools") if getattr(args, name) is not None]
    if len(candidates) != 1:
        raise ConfigError(f"give exactly one of {CANDIDATES} (got {'none' if not candidates else ' and '.join(candidates).replace('_', '-')})")
    if args.runs < 1:
        raise ConfigError("--runs must be at least 1")
    import asyncio

    from evalcore.golden.limits import DEFAULT_LIMITS
    from evalcore.golden.loader import load_golden_set
    from evalcore.mcp.target import STDIO_HEADERS, Target, register_target_secrets
    from evalcore.mcp.transport.base import Limits
    from evalcore.paths import default_golden_set

    register_target_secrets(args.candidate_url, args.candidate_stdio, url_label="--candidate-url", stdio_label="--candidate-stdio")
    chosen = target_from_args(args)  # the baseline's secrets registered too, before any message quotes them
    specs = model_specs_from_args(args)
    if chosen.headers and args.candidate_stdio:
        raise ConfigError(STDIO_HEADERS)
    if args.candidate_url is not None and not args.candidate_url.startswith(("http://", "https://")):
        raise ConfigError(f"--candidate-url must start with http:// or https://, got {args.candidate_url!r}")
    golden_path = args.golden or default_golden_set()
    load_golden_set(golden_path, limits=DEFAULT_LIMITS)  # a bad golden file is refused before any server starts
    overrides = {}
    if args.candidate_tools is not None:
        from evalcore.compare.overrides import load_overrides

        overrides = load_overrides(args.candidate_tools)

    from evalcore.behaviour.runner import BehaviourConfig
    from evalcore.commands.progress import Progress
    from evalcore.compare.arms import Arm, run_arms, server_tool_names
    from evalcore.models.adapter import start_litellm_import
    from evalcore.models.preflight import check_models
    from evalcore.models.tool_format import CatalogRewrite

    start_litellm_import(specs)  # only when a model goes through litellm
    config = BehaviourConfig(
        golden_path=golden_path,
        models=specs,
        db_path=args.db,
        runs=args.runs,
        concurrency=args.concurrency,
        limits=Limits(read_timeout=max(30.0, args.timeout)),
    )
    check_models(config.models)
    with contextlib.ExitStack() as stack:
        base_target = stack.enter_context(chosen.resolve(default_server="reference"))
        if args.candidate_tools is not None:
            from evalcore.compare.overrides import check_overrides

            check_overrides(args.candidate_tools, overrides, asyncio.run(server_tool_names(base_target, config.limits)))
            shown = CatalogRewrite(overrides).to_json()["tools"]
            candidate_target, source = base_target, {"kind": "tools", "source": str(args.candidate_tools), "overrides": shown}
        elif args.candidate_url is not None:
            candidate_target, source = Target(url=args.candidate_url, headers=chosen.headers), {"kind": "url", "source": args.candidate_url}
        else:
            candidate_target, source = Target(stdio=args.candidate_stdio), {"kind": "stdio", "source": args.candidate_stdio}
        baseline_arm = Arm(replace(config, kind="compare-baseline"), base_target)
        candidate_arm = Arm(replace(config, catalog=CatalogRewrite(overrides), kind="compare-candidate"), candidate_target)
        baseline_report, candidate_report = asyncio.run(run_arms(baseline_arm, candidate_arm, progress=Progress("comparing")))
    return _comparison(args, config.golden_id, source, args.runs, baseline_report.run_id, candidate_report.run_id)


def _comparison(
    args: argparse.Namespace, golden_path: str, source: dict[str, Any], runs: int | None, baseline_run_id: str, candidate_run_id: str
) -> Comparison:
    from evalcore.compare.stored import comparison_of
    from evalcore.store.behaviour import new_run_id

    return comparison_of(args.db, golden_path, source, runs, baseline_run_id, candidate_run_id, alpha=args.alpha, comparison_id=f"cmp-{new_run_id()}")
