"""Command: `python -m evalcore run` (Layer 1) and `python -m evalcore runs`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
from datetime import date
from pathlib import Path

from evalcore.errors import ConfigError
from evalcore.golden.limits import DEFAULT_LIMITS
from evalcore.golden.loader import load_golden_set
from evalcore.models.limits import LimitsTable, parse_limits, provider_key
from evalcore.models.types import ModelSpec
from evalcore.paths import default_golden_set
from evalcore.redaction import register_url_secrets
from evalcore.target import STDIO_ENV, STDIO_HEADERS, parse_headers, parse_server_env, register_target_secrets
from evalcore.transport.base import Limits

# litellm reaches the network on import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def model_specs(args: argparse.Namespace) -> tuple[ModelSpec, ...]:
    names = [name.strip() for name in args.models.split(",") if name.strip()]
    if not names:
        raise ConfigError("--models names no model; e.g. --models sim/lexical,openai/gpt-4o-mini")
    if len(set(names)) != len(names):
        raise ConfigError(f"--models lists a model twice: {args.models}")
    limits = provider_limits(args)
    specs = []
    for name in names:
        api_base = None if name.startswith("sim/") else args.api_base
        limited = limits.for_provider(provider_key(name, api_base))
        specs.append(ModelSpec(name=name, api_base=api_base, max_concurrency=args.model_concurrency, timeout_s=args.timeout, limits=limited))
    return tuple(specs)


def provider_limits(args: argparse.Namespace) -> LimitsTable:
    """`--max-connections`, `--requests-per-minute` and `--rate-limit-wait`, per provider (evalcore.models.limits)."""
    return parse_limits(args.max_connections, args.requests_per_minute, max_wait_s=args.rate_limit_wait)


def judge_spec(args: argparse.Namespace) -> ModelSpec | None:
    """The judge goes where the models go: `--judge-api-base`, else `--api-base` (a `sim/` judge needs neither)."""
    if not args.judge:
        return None
    api_base = None if args.judge.startswith("sim/") else (getattr(args, "judge_api_base", None) or args.api_base)
    limits = provider_limits(args).for_provider(provider_key(args.judge, api_base))
    return ModelSpec(name=args.judge, api_base=api_base, timeout_s=args.timeout, limits=limits)


def run_behaviour_command(args: argparse.Namespace) -> int:
    register_target_secrets(args.url, args.stdio)  # before any message quotes them
    for option, api_base in (("--api-base", args.api_base), ("--judge-api-base", args.judge_api_base)):
        if api_base:
            register_url_secrets(api_base, option)
    if args.max_steps < 1:
        raise ConfigError(f"--max-steps must be at least 1, got {args.max_steps}")
    if args.runs < 1 or args.concurrency < 1 or args.model_concurrency < 1:
        raise ConfigError("--runs, --concurrency and --model-concurrency must be at least 1")
    if not 0 < args.fault_timeout <= 120:
        raise ConfigError(f"--fault-timeout must be between 0 and 120 seconds, got {args.fault_timeout}")
    if not 0 <= args.max_drop <= 1:
        raise ConfigError(f"--max-drop must be between 0 and 1, got {args.max_drop}")
    if not 0 <= args.max_error_rate <= 1:
        raise ConfigError(f"--max-error-rate must be between 0 and 1, got {args.max_error_rate}")
    if args.run_id and (args.resume or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", args.run_id)):
        raise ConfigError("--run-id takes letters, digits, '.', '_' or '-' (at most 64), and does not combine with --resume")
    # A malformed or hostile golden file is refused here, before a server starts or the store is touched;
    # the runner checks the tool names again once the server has listed its tools.
    if args.header and args.stdio:
        raise ConfigError(STDIO_HEADERS)
    headers = parse_headers(args.header)
    if args.server_env and not args.stdio:
        raise ConfigError(STDIO_ENV)
    server_env = parse_server_env(args.server_env)
    golden_path = args.golden or default_golden_set()
    golden_limits = DEFAULT_LIMITS.with_overrides(args.golden_limit)
    load_golden_set(golden_path, limits=golden_limits)

    from evalcore.models.adapter import start_litellm_import

    start_litellm_import()  # it overlaps the imports below and the server's start
    from evalcore.behaviour.report import render_summary
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.commands.progress import Progress
    from evalcore.models.preflight import check_models
    from evalcore.target import resolve_target

    run_date = _parse_date(args.date) if args.date else None
    if args.prices:
        _register_prices(args.prices)
    judge = judge_spec(args)
    config = BehaviourConfig(
        golden_path=golden_path,
        models=model_specs(args),
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
    )
    check_models([*config.models, *([judge] if judge else [])])  # before the server starts or any attempt runs
    server = args.server if not (args.url or args.stdio) else None
    if server is None and not (args.url or args.stdio):
        server = "reference"
    progress = Progress("running")  # closed however the run ends: its heartbeat thread stops with it
    with (
        resolve_target(url=args.url, stdio=args.stdio, server=server, headers=headers, server_env=server_env) as target,
        contextlib.closing(progress),
    ):
        report = asyncio.run(run_behaviour(config, target, resume_run_id=args.resume, new_run_id=args.run_id, progress=progress))
    from dataclasses import replace

    from evalcore.commands.drift import drift_of_run, render_run_drift, with_drift
    from evalcore.store.behaviour import save_report

    drift = drift_of_run(config.db_path, config.golden_id, report.run_id)
    report = replace(report, drift=drift, gate=with_drift(report.gate, drift))
    save_report(config.db_path, report)  # the stored report and the --out file are one document, drift included
    document = report.to_json()
    print(render_summary(document))
    drift_text = render_run_drift(document["drift"])
    if drift_text:
        print(drift_text)
    if args.out:  # the report's serialisation (RunReport.to_json): its secrets are already removed
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    failed = not document["passed"] or (args.require_case_gates and not document["caseGates"]["passed"])
    return 1 if failed else 0


def list_runs_command(args: argparse.Namespace) -> int:
    from evalcore.store.behaviour import list_runs

    runs = list_runs(args.db)
    if not runs:
        print(f"no behaviour runs in {args.db}")
    else:
        print(f"{'run id':<24} {'status':<10} {'date':<10} {'attempts':>8}  models / golden set")
        for run in runs:
            models = ",".join(json.loads(run["models_json"]))
            print(f"{run['run_id']:<24} {run['effective_status']:<10} {run['run_date']!s:<10} {run['attempts']:>8}  {models} · {run['golden_path']}")
    _leftovers(runs, stop=args.stop_leftovers)
    return 0


def _leftovers(runs: list[dict[str, object]], *, stop: bool) -> None:
    """Processes started by an evalcore process that is gone (a crashed run's server, say): listed, and stopped when asked."""
    from evalcore.processes import leftovers, stop_leftover

    found = leftovers()
    if not found:
        return
    run_of_pid = {run["pid"]: run["run_id"] for run in runs if run["effective_status"] == "crashed"}
    print(f"\n{len(found)} process(es) left running by an evalcore process that is gone:")
    for leftover in found:
        owner = f"run {run_of_pid[leftover.owner_pid]}" if leftover.owner_pid in run_of_pid else f"pid {leftover.owner_pid}"
        print(f"  pid {leftover.pid} (started by {owner}): {leftover.command}")
        if stop:
            stop_leftover(leftover)
    print("stopped them" if stop else "stop them with: python -m evalcore runs --stop-leftovers")


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
