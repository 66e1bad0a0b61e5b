"""Command: `python -m evalcore run` (Layer 1) — a golden set through models with the server's tools, scored and stored."""

from __future__ import annotations

import argparse
import contextlib
import gc
import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.commands.options import (
    TargetChoice,
    db_option,
    judge_spec_from_args,
    judge_threshold_options,
    judge_thresholds_from_args,
    model_options,
    model_specs_from_args,
    provider_limit_options,
    target_from_args,
    target_options,
)
from evalcore.errors import ConfigError

if TYPE_CHECKING:
    from evalcore.behaviour.runner import BehaviourConfig
    from evalcore.behaviour.shards import Shard
    from evalcore.commands.progress import Progress
    from evalcore.mcp.recording import ReplayTarget, ServerTarget
    from evalcore.records import RunReport

NAME = "run"
SUMMARY = "Layer 1: run a golden set through models with the server's tools, scored and stored"
ORDER = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--golden", type=Path, metavar="PATH", help="golden set YAML (default golden/tasks.yaml, here or the bundled one)")
    model_options(parser, judge=True)
    judge_threshold_options(parser, policy=True)
    parser.add_argument(
        "--judge-repeats",
        type=int,
        default=1,
        metavar="K",
        help="grade each attempt K times (odd) and take the majority; the report gives the judge's flip rate and Fleiss' kappa",
    )
    target_options(parser)
    parser.add_argument(
        "--replay-run",
        metavar="RUN_ID",
        help="contact no server: serve the tool catalog and tool results recorded by this stored run (--db); a call it lacks is errored",
    )
    parser.add_argument("--runs", type=int, default=5, help="attempts per case and model (default 5)")
    parser.add_argument("--out", type=Path, metavar="PATH", help="write the JSON report here")
    db_option(parser, "DuckDB store")
    parser.add_argument(
        "--no-db",
        action="store_true",
        help="keep nothing: the run uses a temporary store, deleted when it ends (no baseline to compare with; not with --resume, --cache or --replay-run)",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="attempts in flight at once, all models together (default 8)")
    parser.add_argument("--model-concurrency", type=int, default=4, help="attempts in flight per model (default 4)")
    parser.add_argument("--cache", action="store_true", help="reuse stored attempts of unchanged cases on an unchanged server and model")
    parser.add_argument(
        "--include-drafts",
        action="store_true",
        help="also grade the cases marked review: {status: draft} (skipped otherwise); the run is a draft-run: never green, never a baseline",
    )
    parser.add_argument("--resume", metavar="RUN_ID", help="finish a crashed or interrupted run without repeating its stored attempts")
    parser.add_argument("--run-id", metavar="ID", help="id for the new run (default: time-based); lets a launcher follow it")
    parser.add_argument("--prices", type=Path, metavar="PATH", help="YAML price table for custom models: {model: {input: USD/token, output: USD/token}}")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per model call (default 60)")
    parser.add_argument("--max-steps", type=int, default=8, metavar="N", help="model turns an attempt may take before it stops at the step limit (default 8)")
    provider_limit_options(parser)
    parser.add_argument("--fault-timeout", type=float, default=5.0, help="seconds before a call under an injected timeout fault gives up (default 5)")
    parser.add_argument("--max-drop", type=float, default=0.02, help="run gate: largest tolerated metric drop below the last green run (default 0.02)")
    parser.add_argument(
        "--max-error-rate",
        type=float,
        default=0.0,
        metavar="R",
        help=(
            "share of attempts that may error (provider or judge failure, a call not in a replayed recording) and the run still "
            "pass its gate; it is never a baseline then (default 0)"
        ),
    )
    parser.add_argument("--date", metavar="YYYY-MM-DD", help="the date the run stands for (default today)")
    parser.add_argument("--require-case-gates", action="store_true", help="also exit 1 when a case misses its gate (hard 5/5, soft 4/5)")
    parser.add_argument(
        "--shard",
        metavar="I/K",
        help="run only shard I of K (0 <= I < K) and write it to --shard-dir, not to the store; auto/K reads JOB_COMPLETION_INDEX",
    )
    parser.add_argument("--shard-dir", type=Path, metavar="DIR", help="folder for the shard's Parquet file (with --shard; `evalcore merge` joins them)")
    parser.add_argument(
        "--golden-limit",
        action="append",
        default=[],
        metavar="NAME=N",
        help="raise or lower a golden-file limit (file_bytes, nodes, alias_nodes, depth, prompt_chars, cases; docs/golden.md); repeatable",
    )


def command(args: argparse.Namespace) -> int:
    # Start-up (the imports, the golden set, the server's start) runs with the collector off, as the reference server's
    # does: what it builds lives to the end of the run, and collections during it would walk it for nothing. It is
    # frozen, and the collector turned on, before the run (`_command`), or here if start-up fails.
    gc.disable()
    try:
        if not args.no_db:
            return _command(args)
        return _storeless(args)
    finally:
        gc.enable()


def _storeless(args: argparse.Namespace) -> int:
    """`--no-db`: the run writes its attempts to a store in a temporary folder, removed with the store when the run ends."""
    import tempfile

    needing = [option for option, given in (("--resume", args.resume), ("--cache", args.cache), ("--replay-run", args.replay_run)) if given]
    if needing:
        raise ConfigError(f"--no-db keeps no store, and {', '.join(needing)} reads one: drop --no-db, or give --db PATH")
    with tempfile.TemporaryDirectory(prefix="evalcore-run-") as folder:
        args.db = Path(folder) / "run.duckdb"
        return _command(args)


def _command(args: argparse.Namespace) -> int:
    import asyncio

    from evalcore.golden.limits import DEFAULT_LIMITS
    from evalcore.golden.loader import load_golden_set
    from evalcore.mcp.transport.base import Limits
    from evalcore.paths import default_golden_set

    chosen = target_from_args(args)  # its secrets registered before any message quotes them
    specs, judge = model_specs_from_args(args), judge_spec_from_args(args)
    if args.max_steps < 1:
        raise ConfigError(f"--max-steps must be at least 1, got {args.max_steps}")
    if args.runs < 1 or args.concurrency < 1 or args.model_concurrency < 1:
        raise ConfigError("--runs, --concurrency and --model-concurrency must be at least 1")
    if not 0 < args.fault_timeout <= 120:
        raise ConfigError(f"--fault-timeout must be between 0 and 120 seconds, got {args.fault_timeout}")
    if args.judge_repeats < 1 or args.judge_repeats % 2 == 0:
        raise ConfigError(f"--judge-repeats must be odd (1, 3, 5, ...) so a majority exists, got {args.judge_repeats}")
    if args.judge_repeats > 1 and judge is None:
        raise ConfigError("--judge-repeats grades with the judge: give --judge MODEL too")
    if not 0 <= args.max_drop <= 1:
        raise ConfigError(f"--max-drop must be between 0 and 1, got {args.max_drop}")
    if not 0 <= args.max_error_rate <= 1:
        raise ConfigError(f"--max-error-rate must be between 0 and 1, got {args.max_error_rate}")
    if args.run_id and (args.resume or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", args.run_id)):
        raise ConfigError("--run-id takes letters, digits, '.', '_' or '-' (at most 64), and does not combine with --resume")
    shard = _shard(args)
    if args.replay_run and (chosen.given or chosen.headers or chosen.server_env):
        raise ConfigError(
            "--replay-run serves a stored run's recording and contacts no server: give no --url, --stdio, --server, --header or --server-env with it"
        )
    if args.replay_run and shard is not None:
        raise ConfigError("--replay-run does not combine with --shard: replay the run on one machine")
    # A malformed or hostile golden file is refused here, before a server starts or the store is touched;
    # the runner checks the tool names again once the server has listed its tools.
    golden_path = args.golden or default_golden_set()
    golden_limits = DEFAULT_LIMITS.with_overrides(args.golden_limit)
    loaded = load_golden_set(golden_path, limits=golden_limits)
    drafts = loaded.has_drafts
    if drafts and not args.include_drafts and not loaded.without_drafts().cases:
        raise ConfigError(f"{golden_path}: every case is a draft (review: {{status: draft}}); run with --include-drafts, or accept them first")
    if args.resume and not args.replay_run:
        args.replay_run = _resumed_replay(args, chosen)  # a replay resumes as a replay of the run it replayed, never on a live server
    replayed = replay_target(args.db, args.replay_run) if args.replay_run else None

    from evalcore.models.adapter import start_litellm_import

    start_litellm_import([*specs, judge])  # when a model takes litellm: it overlaps the imports below and the server's start
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.commands.progress import Progress
    from evalcore.models.preflight import check_models

    run_date = _parse_date(args.date) if args.date else None
    if args.prices:
        _register_prices(args.prices)
    config = BehaviourConfig(
        golden_path=golden_path,
        models=specs,
        db_path=args.db,
        runs=args.runs,
        concurrency=args.concurrency,
        use_cache=args.cache,
        judge=judge,
        max_steps=args.max_steps,
        run_date=run_date,
        max_drop=args.max_drop,
        max_error_rate=args.max_error_rate,
        limits=Limits(read_timeout=max(30.0, args.timeout)),
        fault_timeout_s=args.fault_timeout,
        golden_limits=golden_limits,
        replay_of=args.replay_run,
        kind="replay" if args.replay_run else ("draft-run" if args.include_drafts and drafts else "run"),
        include_drafts=args.include_drafts,
        judge_policy=args.judge_policy,
        judge_thresholds=judge_thresholds_from_args(args),
        judge_repeats=args.judge_repeats,
    )
    check_models([*config.models, *([judge] if judge else [])])  # before the server starts or any attempt runs
    progress = Progress("running")  # closed however the run ends: its heartbeat thread stops with it
    served = contextlib.nullcontext(replayed) if replayed is not None else chosen.resolve(default_server="reference")
    # What start-up built (modules, the golden set, the config) lives to the end of the run: frozen, the collections
    # the run's allocations trigger do not walk it again and again.
    gc.freeze()
    gc.enable()
    with served as target, contextlib.closing(progress):
        if shard is not None:
            return _run_shard(config, target, shard, args.shard_dir, progress)
        report = asyncio.run(run_behaviour(config, target, resume_run_id=args.resume, new_run_id=args.run_id, progress=progress))
    document = publish_report(config.db_path, report, args.out)
    show_report(document)
    failed = not document["passed"] or (args.require_case_gates and not document["caseGates"]["passed"])
    return 1 if failed else 0


def publish_report(db: Path, report: RunReport, out: Path | None) -> dict[str, Any]:
    """A finished run's report with its drift read from the history, stored again as such and written to `out`: the
    document `run --out` (and `merge --out`) writes."""
    from dataclasses import replace

    from evalcore.commands.drift import drift_of_run, with_drift
    from evalcore.store.behaviour import save_report
    from evalcore.store.db import held_open

    # The history's reads in one open of the store, closed before the report is written: what DuckDB keeps of a query
    # over every stored transcript (some 45 MB at 20,000 attempts) is given back first, not held beside the write.
    with held_open(db):
        drift = drift_of_run(db, report.golden["path"], report.run_id)
    report = replace(report, drift=drift, gate=with_drift(report.gate, drift))
    save_report(db, report)  # the stored report and the --out file are one document, drift included
    if out:  # the report's serialisation (RunReport.to_json, written a case at a time): its secrets are already removed
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as file:
            file.writelines(report.json_pieces(indent=2))
            file.write("\n")
    return report.to_json()


def show_report(document: dict[str, Any]) -> None:
    """Print a finished run's summary and the changes it found in its history."""
    from evalcore.behaviour.report import render_summary
    from evalcore.commands.drift import render_run_drift

    print(render_summary(document))
    drift_text = render_run_drift(document["drift"])
    if drift_text:
        print(drift_text)


def _shard(args: argparse.Namespace) -> Shard | None:
    """`--shard I/K` with `--shard-dir DIR`: a shard writes its file and nothing else, so it takes no store option."""
    if args.shard is None:
        if args.shard_dir is not None:
            raise ConfigError("--shard-dir goes with --shard I/K")
        return None
    from evalcore.behaviour.shards import parse_shard

    shard = parse_shard(args.shard)
    if args.shard_dir is None:
        raise ConfigError("--shard needs --shard-dir DIR, the folder its Parquet file goes to")
    options = (("--out", args.out), ("--resume", args.resume), ("--run-id", args.run_id), ("--cache", args.cache), ("--include-drafts", args.include_drafts))
    clashing = [option for option, given in options if given]
    if clashing:
        raise ConfigError(f"--shard writes only its shard file: {', '.join(clashing)} belong to `evalcore run` unsharded, or to `evalcore merge`")
    return shard


def _run_shard(config: BehaviourConfig, target: ServerTarget, shard: Shard, folder: Path, progress: Progress) -> int:
    import asyncio

    from evalcore.behaviour.runner import run_shard
    from evalcore.behaviour.shards import shard_file_name
    from evalcore.store.shard_file import write_shard_file

    result = asyncio.run(run_shard(config, target, shard, progress=progress))
    path = folder / shard_file_name(result.identity, shard)
    write_shard_file(path, result.to_json(), result.records, result.exchanges)
    errored = sum(record.errored for record in result.records)
    print(f"shard {shard}: {len(result.records)} attempts ({errored} errored) written to {path}; `evalcore merge` joins the shards")
    return 0


def replay_target(db: Path, run_id: str) -> ReplayTarget:
    """The recorded server of a stored run (`--replay-run`); a one-line error for an unknown run or one without a recording."""
    from evalcore.mcp.recording import ReplayTarget
    from evalcore.store.behaviour import load_run
    from evalcore.store.exchanges import load_exchanges

    load_run(db, run_id)  # an unknown run: StoreError, one line
    exchanges = load_exchanges(db, run_id)
    if not any(exchange.method == "tools/list" and exchange.answer for exchange in exchanges):
        raise ConfigError(f"run {run_id} in {db} has no recorded tool list to replay (it was made before evalcore recorded MCP exchanges)")
    return ReplayTarget(run_id, exchanges)


def _resumed_replay(args: argparse.Namespace, chosen: TargetChoice) -> str | None:
    """The recorded run a resumed replay served (from its stored plan), or None for a run of another kind."""
    from evalcore.behaviour.plan import RunPlan
    from evalcore.store.behaviour import load_plan

    stored = load_plan(args.db, args.resume)
    plan = RunPlan.from_json(stored) if stored is not None else None
    if plan is None or plan.replay_of is None:
        return None
    if chosen.given or chosen.headers or chosen.server_env:
        raise ConfigError(f"run {args.resume} is a replay of run {plan.replay_of}: resume it with no --url, --stdio, --server, --header or --server-env")
    return plan.replay_of


def _parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise ConfigError(f"--date must be YYYY-MM-DD, got {text!r}") from exc


def _register_prices(path: Path) -> None:
    import yaml

    from evalcore.models.pricing import register_prices

    try:
        table = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        register_prices({name: (float(p["input"]), float(p["output"])) for name, p in table.items()})
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{path}: not a price table of the form {{model: {{input: USD/token, output: USD/token}}}} ({exc})") from exc
