"""Orchestration: back-fill a simulated nightly history (Layer 1) so drift detection and the dashboard have data.

`--days` nightly runs of the golden set against the bundled reference server,
run_date = today - days + i for i = 1..days, with three models, all `sim/`
(simulated, nothing real): the keyword-matching baseline `sim/lexical` (the
same answers every night, and the cases keywords cannot solve failed), and two
scripted models written next to the store (`<db dir>/demo/`):

- `assistant-pinned.yaml`, a model pinned to one version: the right tool and
  arguments on every case, with seeded per-night noise on a few soft cases
  (0, 1 or rarely 2 failed attempts of 5: flaky cases). From the
  description-change night on it stops calling `search_knowledge_base` for
  `kb-password-reset` (it answers from memory instead), as a model might
  after that tool's description turned vague.
- `assistant-latest.yaml`, a model called by a "latest" alias: as good,
  until the model-update night, from which it reports a new `model_version`
  and gets three cases wrong (a wrong tool, no call, wrong tool in 4 of 5
  attempts): a model update.

Before the nights, on the last night's date, it runs the bundled Layer 2 sets once each
(`golden/robustness.yaml`, `golden/security.yaml`) with their scripted
models from `golden/scripts/` — one that recovers or refuses, one that claims
success or obeys — so the robustness and attack columns have data — and the
multi-turn and MRTR set (`golden/multiturn.yaml`) with `sim/lexical` and the
scripted `sim/user`, so the drill-down has rounds and simulated-user turns.
The nightly set is run last, so the dashboard opens on it: three models side
by side, with failures, flaky cases and the drift flags in view.

From the description-change night on, the runs use the reference server
started with `--variant v2` (a vaguer `search_knowledge_base` description), so
the server fingerprint changes. With the defaults (21 nights) the description
changes on night 10 and the model on night 16; `evalcore.drift` should flag
exactly those four (model, case) pairs, on those nights.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Final

import yaml

from evalcore.errors import ConfigError
from evalcore.golden.demo_sets import LAYER2_SETS, MULTITURN_SET
from evalcore.golden.loader import load_golden_set
from evalcore.golden.model import GoldenCase, GoldenSet, example_args
from evalcore.models.types import ModelSpec
from evalcore.paths import bundled, model_identity

MIN_DAYS: Final = 8  # the description change needs 3 earlier nights of history, and the model update one more night
NOISY_CASES: Final = ("ticket-invoice-pdf", "book-renewal-call", "customer-then-ticket")
DESCRIPTION_CASE: Final = "kb-password-reset"  # the steady model stops using search_knowledge_base for it under v2
MODEL_UPDATE_CASES: Final = ("overdue-invoices-acme", "calendar-day", "order-tracking")
STEADY_VERSION: Final = "sim-pinned-2026-06"
DRIFTING_VERSIONS: Final = ("sim-latest-2026-05", "sim-latest-2026-11")
STEADY_SCRIPT: Final = "assistant-pinned.yaml"  # the steady model: one version all along
DRIFTING_SCRIPT: Final = "assistant-latest.yaml"  # the drifting model: an alias its provider moves to a new version
BASELINE_MODEL: Final = "sim/lexical"
GOLDEN_DIR: Final = bundled("golden")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


@dataclass(frozen=True)
class DemoConfig:
    db_path: Path
    golden_path: Path = Path("golden/tasks.yaml")
    days: int = 21
    runs: int = 5
    concurrency: int = 16
    seed: int = 2026
    today: date = field(default_factory=date.today)

    @property
    def first_day(self) -> date:
        return self.today - timedelta(days=self.days - 1)

    @property
    def description_change(self) -> date:
        """The night the server's descriptions change (night days·3/7 + 1, 1-based)."""
        return self.first_day + timedelta(days=self.days * 3 // 7)

    @property
    def model_update(self) -> date:
        """The night the drifting model is silently updated (night days·5/7 + 1, 1-based)."""
        return self.first_day + timedelta(days=self.days * 5 // 7)

    @property
    def script_dir(self) -> Path:
        return self.db_path.parent / "demo"


@dataclass(frozen=True)
class DemoResult:
    run_ids: tuple[str, ...]  # the nightly runs of the golden set
    layer2_run_ids: tuple[str, ...]  # one run of each bundled Layer 2 set (faults, attacks) on the last night
    models: tuple[str, ...]
    attempts: int
    seconds: float
    description_change: date
    model_update: date
    multiturn_run_ids: tuple[str, ...] = ()  # one run of golden/multiturn.yaml on the last night


def right_calls(case: GoldenCase) -> list[dict[str, Any]]:
    """The calls a good model makes for a case: the expected tool(s) with `expect_args` on the first call,
    and plausible arguments, taken from the prompt, for the later tools of a sequence."""
    calls: list[dict[str, Any]] = []
    for index, want in enumerate(case.expected_calls()):
        args = _json_safe(example_args(want.args)) if index == 0 or want.args else _follow_up_args(want.tool, case.prompt)
        calls.append({"name": want.tool, "args": args})
    return calls


def good_entry(case: GoldenCase) -> dict[str, Any]:
    if case.is_negative:
        return {"no_call": True, "text": "I can't do that with the tools I have, but here is what I can tell you."}
    return {"calls": right_calls(case), "text": "Done: I used the tools and summarised what they returned."}


def steady_script(golden: GoldenSet, config: DemoConfig) -> dict[str, Any]:
    """The steady model: right on every case, seeded noise on `NOISY_CASES`, one case lost to the description change."""
    cases = {case.id: good_entry(case) for case in golden.cases}
    rng = random.Random(config.seed)
    changes: dict[str, Any] = {}
    for offset in range(config.days):
        night = config.first_day + timedelta(days=offset)
        block: dict[str, Any] = {}
        for case_id in NOISY_CASES:
            if case_id not in cases:
                continue
            failures = rng.choices((0, 1, 2), weights=(6, 3, 1))[0]
            failing = rng.sample(range(1, config.runs + 1), min(failures, config.runs))
            block[case_id] = {**cases[case_id], "attempts": {n: {"no_call": True, "text": "I'm not sure."} for n in sorted(failing)}}
        if night >= config.description_change and DESCRIPTION_CASE in cases:
            block[DESCRIPTION_CASE] = {"no_call": True, "text": "Ask the customer to check their spam folder and try again."}
        changes[night.isoformat()] = {"cases": block}
    return {"defaults": {"model_version": STEADY_VERSION}, "cases": cases, "from": changes}


def drifting_script(golden: GoldenSet, config: DemoConfig) -> dict[str, Any]:
    """The drifting model: right on every case until `model_update`, then wrong on `MODEL_UPDATE_CASES`, with a new version."""
    cases = {case.id: good_entry(case) for case in golden.cases}
    wrong: dict[str, Any] = {}
    known = [c for c in MODEL_UPDATE_CASES if c in cases]
    if known:
        wrong[known[0]] = {"calls": [{"name": "get_invoice", "args": {"invoice_id": "INV-2026-0003"}}], "text": "Here is the invoice."}
    if len(known) > 1:
        wrong[known[1]] = {"no_call": True, "text": "I don't have access to the calendar."}
    if len(known) > 2:
        right = cases[known[2]]
        wrong_call = {"calls": [{"name": "search_invoices", "args": {"customer_id": "CUST-1001"}}], "text": "No order found."}
        wrong[known[2]] = {**wrong_call, "attempts": {1: {"calls": right.get("calls", [])}}}
    return {
        "defaults": {"model_version": DRIFTING_VERSIONS[0]},
        "cases": cases,
        "from": {config.model_update.isoformat(): {"defaults": {"model_version": DRIFTING_VERSIONS[1]}, "cases": wrong}},
    }


def write_scripts(golden: GoldenSet, config: DemoConfig) -> tuple[Path, Path]:
    config.script_dir.mkdir(parents=True, exist_ok=True)
    paths = (config.script_dir / STEADY_SCRIPT, config.script_dir / DRIFTING_SCRIPT)
    for path, script in zip(paths, (steady_script(golden, config), drifting_script(golden, config)), strict=True):
        header = "# Generated by `python -m evalcore demo`: a simulated model (sim/script), not a real one.\n"
        path.write_text(header + yaml.safe_dump(script, sort_keys=False, width=200), encoding="utf-8")
    return paths


def prepare_store(db_path: Path, *, force: bool) -> None:
    """Refuse a store that already holds behaviour runs, unless `force` (which deletes the file first)."""
    from evalcore.behaviour.history import count_behaviour_runs

    if not db_path.exists():
        return
    if force:
        db_path.unlink()
        Path(f"{db_path}.wal").unlink(missing_ok=True)
        return
    existing = count_behaviour_runs(db_path)
    if existing:
        raise ConfigError(f"{db_path} already holds {existing} behaviour runs; the demo needs a fresh store: use another --db, or --force to delete it")


def run_demo(config: DemoConfig, *, force: bool = False) -> DemoResult:
    """Back-fill the demo history into `config.db_path`; see the module docstring for what it contains."""
    if config.days < MIN_DAYS:
        raise ConfigError(f"--days must be at least {MIN_DAYS} (the demo needs history before each change), got {config.days}")
    if config.runs < 1 or config.concurrency < 1:
        raise ConfigError("--runs and --concurrency must be at least 1")
    golden = load_golden_set(config.golden_path)  # a malformed golden file is refused before the store is touched
    prepare_store(config.db_path, force=force)
    steady, drifting = write_scripts(golden, config)
    scripted = tuple(ModelSpec(name=model_identity(f"sim/script:{path}"), max_concurrency=config.concurrency) for path in (steady, drifting))
    models = (*scripted, ModelSpec(name=BASELINE_MODEL, max_concurrency=config.concurrency))
    nights = [config.first_day + timedelta(days=offset) for offset in range(config.days)]
    before = [n for n in nights if n < config.description_change]
    after = [n for n in nights if n >= config.description_change]
    started = time.perf_counter()
    # The one-off sets first: the nightly set, run last, is the one the dashboard opens on.
    layer2_run_ids = _run_layer2(config)
    multiturn_run_ids = _run_multiturn(config)
    run_ids = [*_run_nights(config, models, before, "reference"), *_run_nights(config, models, after, "reference-v2")]
    seconds = time.perf_counter() - started
    return DemoResult(
        run_ids=tuple(run_ids),
        layer2_run_ids=tuple(layer2_run_ids),
        multiturn_run_ids=tuple(multiturn_run_ids),
        models=tuple(m.name for m in models),
        attempts=len(nights) * len(models) * len(golden.cases) * config.runs,
        seconds=seconds,
        description_change=config.description_change,
        model_update=config.model_update,
    )


def _run_nights(config: DemoConfig, models: Sequence[ModelSpec], nights: Sequence[date], server: str) -> list[str]:
    """The nights' runs against the configured reference server `server` (recorded by that name, so the commands the
    dashboard suggests can start it again)."""
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.conformance.runner import run_suite
    from evalcore.mcp.target import resolve_target
    from evalcore.store.conformance import record_conformance_run

    if not nights:
        return []
    run_ids: list[str] = []
    with resolve_target(server=server) as target:
        # Layer 0 of each server variant, so the matrix's conformance column has a verdict for the runs that follow.
        record_conformance_run(config.db_path, asyncio.run(run_suite(target, runs=config.runs)))
        for night in nights:
            behaviour = BehaviourConfig(
                golden_path=config.golden_path,
                models=tuple(models),
                db_path=config.db_path,
                runs=config.runs,
                concurrency=config.concurrency,
                run_date=night,
            )
            report = asyncio.run(run_behaviour(behaviour, target))
            run_ids.append(report.run_id)
    return run_ids


def _run_layer2(config: DemoConfig) -> list[str]:
    """One run of each bundled Layer 2 golden set on the last night, each with its two scripted models (one good, one bad)."""
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.mcp.target import resolve_target

    run_ids: list[str] = []
    with resolve_target(server="reference") as target:
        for golden_name, scripts in LAYER2_SETS:
            behaviour = BehaviourConfig(
                golden_path=GOLDEN_DIR / golden_name,
                models=tuple(
                    ModelSpec(name=model_identity(f"sim/script:{GOLDEN_DIR / 'scripts' / script}"), max_concurrency=config.concurrency) for script in scripts
                ),
                db_path=config.db_path,
                runs=config.runs,
                concurrency=config.concurrency,
                run_date=config.today,
                fault_timeout_s=1.0,
            )
            report = asyncio.run(run_behaviour(behaviour, target))
            run_ids.append(report.run_id)
    return run_ids


def _run_multiturn(config: DemoConfig) -> list[str]:
    """One run of the multi-turn and MRTR set on the last night, with the lexical baseline and the scripted simulated user."""
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.mcp.target import resolve_target

    with resolve_target(server="reference") as target:
        behaviour = BehaviourConfig(
            golden_path=GOLDEN_DIR / MULTITURN_SET,
            models=(ModelSpec(name="sim/lexical", max_concurrency=config.concurrency),),
            db_path=config.db_path,
            runs=config.runs,
            concurrency=config.concurrency,
            run_date=config.today,
        )
        report = asyncio.run(run_behaviour(behaviour, target))
    return [report.run_id]


def _follow_up_args(tool: str, prompt: str) -> dict[str, Any]:
    emails = _EMAIL.findall(prompt)
    email = emails[0] if emails else "billing@acme.example"
    customer = re.search(r"CUST-\d{4}", prompt)
    ticket = re.search(r"TCK-\d{4}", prompt)
    day = re.search(r"\d{4}-\d{2}-\d{2}", prompt)
    on = day.group(0) if day else "2026-08-04"
    by_tool: Mapping[str, dict[str, Any]] = {
        "send_email": {"to": email, "subject": "Update from support", "body": "Please see the details below."},
        "create_support_ticket": {
            "customer_id": customer.group(0) if customer else "CUST-1001",
            "subject": "Faulty USB-C dock",
            "description": prompt,
        },
        "update_ticket_status": {"ticket_id": ticket.group(0) if ticket else "TCK-7001", "status": "pending"},
        "create_calendar_event": {"title": "Call", "start": f"{on}T14:00:00Z", "end": f"{on}T15:00:00Z", "attendees": [email]},
    }
    return by_tool.get(tool, {})


def _json_safe(value: Any) -> Any:
    """Dates (YAML parses 2026-01-01 as one) as ISO strings, so the script holds what a model would send."""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value
