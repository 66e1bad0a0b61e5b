"""Command: `python -m evalcore perturb` — how fragile is my tool catalog? A golden set under generated catalog
perturbations, each arm tested against the baseline for the drop in selection accuracy, per model and per tool.

Exit codes: 0 when no model and no tool selects significantly worse under any
perturbation, 1 when one does, or was not wholly measured (an arm scored no
attempt of one of its cases: that case's comparison is inconclusive, as
`compare` exits 1 on it), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.commands.options import db_option, model_options, model_specs_from_args, provider_limit_options, target_from_args, target_options
from evalcore.errors import ConfigError

if TYPE_CHECKING:
    from evalcore.compare.perturbations import Perturbation

NAME = "perturb"
SUMMARY = "how fragile is the tool catalog? run a golden set under distractor tools, renamed tools, cut or removed descriptions, a shuffled order"
ORDER = 31


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--golden", type=Path, metavar="PATH", help="golden set YAML every arm runs (default golden/tasks.yaml, here or the bundled one)")
    model_options(parser, models="comma-separated litellm model strings every arm runs (default sim/lexical)")
    target_options(
        parser,
        server="a configured server (reference, the default)",
        url="Streamable HTTP endpoint",
        stdio="command that starts a stdio server",
        server_env=False,
    )
    parser.add_argument(
        "--perturbations",
        metavar="IDS",
        help="comma-separated perturbations to run (default: every one but paraphrased; with --paraphrase-model, every one)",
    )
    parser.add_argument("--paraphrase-model", metavar="MODEL", help="litellm model string that rewords each description for the paraphrased perturbation")
    parser.add_argument("--runs", type=int, default=10, help="attempts per case, model and arm (default 10)")
    parser.add_argument("--alpha", type=float, default=0.05, help="level of the tests, after the Benjamini-Hochberg correction (default 0.05)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the perturbations' random choices (distractors, positions, order; default 0)")
    provider_limit_options(parser)
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the sweep as JSON here (docs/perturb.schema.json)")
    db_option(parser, "DuckDB store for every arm, their comparisons and the sweep")
    parser.set_defaults(concurrency=8, model_concurrency=4, timeout=60.0)


def chosen_perturbations(ids: str | None, paraphrase_model: str | None) -> list[Perturbation]:
    """The perturbations `--perturbations` names (or the default set), checked against `--paraphrase-model`."""
    from evalcore.compare.perturbations import get, registered

    if ids is None:
        return [p for p in registered() if not p.needs_model or paraphrase_model is not None]
    names = [name.strip() for name in ids.split(",") if name.strip()]
    if not names or len(set(names)) != len(names):
        raise ConfigError(f"--perturbations must name each perturbation once, got {ids!r} (known: {', '.join(p.id for p in registered())})")
    try:
        chosen = [get(name) for name in names]
    except KeyError as exc:
        raise ConfigError(f"--perturbations: {exc.args[0]}") from None
    needing = [p.id for p in chosen if p.needs_model]
    if needing and paraphrase_model is None:
        raise ConfigError(f"--perturbations {needing[0]} needs --paraphrase-model MODEL, the model that rewords the descriptions")
    if paraphrase_model is not None and not needing:
        raise ConfigError("--paraphrase-model is used only by the paraphrased perturbation; add it to --perturbations")
    return chosen


def command(args: argparse.Namespace) -> int:
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must lie strictly between 0 and 1, got {args.alpha}")
    if args.runs < 1:
        raise ConfigError("--runs must be at least 1")
    perturbations = chosen_perturbations(args.perturbations, args.paraphrase_model)
    import asyncio

    from evalcore.behaviour.runner import BehaviourConfig
    from evalcore.commands.progress import Progress
    from evalcore.compare.arms import Arm, run_side_by_side, server_tools
    from evalcore.compare.perturbations import CatalogInput
    from evalcore.compare.render import render_sensitivity
    from evalcore.compare.sensitivity import PerturbationArm, PerturbReport, case_tools, judge_sensitivity
    from evalcore.compare.verdicts import compare_runs
    from evalcore.golden.limits import DEFAULT_LIMITS
    from evalcore.golden.loader import load_golden_set
    from evalcore.mcp.transport.base import Limits
    from evalcore.models.adapter import start_litellm_import
    from evalcore.models.preflight import check_models
    from evalcore.models.tool_format import to_openai_tools
    from evalcore.paths import default_golden_set
    from evalcore.store.behaviour import load_metrics, new_run_id
    from evalcore.store.comparisons import write_comparison
    from evalcore.store.perturbations import write_perturbation

    chosen = target_from_args(args)  # its secrets registered before any message quotes them
    specs = model_specs_from_args(args)
    golden_path = args.golden or default_golden_set()
    golden = load_golden_set(golden_path, limits=DEFAULT_LIMITS)  # a bad golden file is refused before any server starts
    start_litellm_import()
    arms_count = len(perturbations) + 1
    config = BehaviourConfig(
        golden_path=golden_path,
        models=specs,
        db_path=args.db,
        runs=args.runs,
        concurrency=max(1, args.concurrency // arms_count),  # the arms share the machine and the providers
        limits=Limits(read_timeout=max(30.0, args.timeout)),
    )
    paraphrase_spec = None
    if args.paraphrase_model is not None:
        paraphrase_spec = model_specs_from_args(args, models=args.paraphrase_model)[0]
    check_models(config.models + ((paraphrase_spec,) if paraphrase_spec else ()))
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(chosen.resolve(default_server="reference"))
        tools = asyncio.run(server_tools(target, config.limits))
        paraphrase = None
        if paraphrase_spec is not None:
            from evalcore.compare.paraphrase import paraphrase_descriptions

            reworded = asyncio.run(paraphrase_descriptions(paraphrase_spec, (str(t.get("description") or "") for t in tools)))
            paraphrase = reworded.__getitem__
        catalog = CatalogInput(tools, seed=args.seed, paraphrase=paraphrase)
        rewrites = {p.id: p.apply(catalog) for p in perturbations}
        for perturbation_id, rewrite in rewrites.items():
            try:
                to_openai_tools(tools, rewrite)
            except ValueError as exc:
                raise ConfigError(f"perturbation {perturbation_id} cannot be shown for this server: {exc}") from None
        arms = [Arm(replace(config, kind="compare-baseline"), target)]
        arms += [Arm(replace(config, catalog=rewrites[p.id], kind="perturb-arm"), target) for p in perturbations]
        reports = asyncio.run(run_side_by_side(arms, progress=Progress("perturbing")))
    baseline_run_id = reports[0].run_id
    metrics = {report.run_id: load_metrics(args.db, report.run_id) for report in reports}
    arm_records = []
    for perturbation, report in zip(perturbations, reports[1:], strict=True):
        shown = rewrites[perturbation.id].to_json()
        source = {"kind": "perturbation", "source": perturbation.id, "rewrite": shown}
        comparison = compare_runs(
            metrics[baseline_run_id],
            metrics[report.run_id],
            comparison_id=f"cmp-{new_run_id()}",
            golden_path=config.golden_id,
            candidate_source=source,
            alpha=args.alpha,
            runs=args.runs,
            baseline_run_id=baseline_run_id,
            candidate_run_id=report.run_id,
        )
        write_comparison(
            args.db,
            comparison_id=comparison.comparison_id,
            baseline_run_id=baseline_run_id,
            candidate_run_id=report.run_id,
            candidate_kind="perturbation",
            candidate=json.dumps(source),
            alpha=args.alpha,
            failed=bool(comparison.failed),
            report=comparison.to_json(),
        )
        arm_records.append(PerturbationArm(perturbation.id, perturbation.title, shown, report.run_id, comparison.comparison_id))
    models, tool_rows = judge_sensitivity(
        metrics[baseline_run_id], [(p.id, metrics[r.run_id]) for p, r in zip(perturbations, reports[1:], strict=True)], case_tools(golden), args.alpha
    )
    sweep = PerturbReport(
        perturb_id=f"ptb-{new_run_id()}",
        golden_path=config.golden_id,
        alpha=args.alpha,
        runs=args.runs,
        seed=args.seed,
        baseline_run_id=baseline_run_id,
        perturbations=tuple(arm_records),
        models=tuple(models),
        tools=tuple(tool_rows),
    )
    document = sweep.to_json()
    write_perturbation(
        args.db,
        perturb_id=sweep.perturb_id,
        baseline_run_id=baseline_run_id,
        golden_path=config.golden_id,
        alpha=args.alpha,
        failed=bool(sweep.failed),
        report=document,
    )
    print(render_sensitivity(sweep))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 1 if sweep.failed else 0
