"""Benchmark part: one drift history per cause, put in a real DuckDB store through the real `run` path, then checked.

For each cause, 11 nightly runs of a 3-case golden set (taken from the bundled
golden/tasks.yaml) by one scripted `sim/script` model against the bundled
reference server, 5 attempts each: 8 good nights, then, from the change night
on, `kb-password-reset` passes 3 of 5 attempts, with the change that causes it:

- server: the runs use the reference server's `--variant v2` descriptions;
- model: the script reports a new model version;
- silent: nothing else changes;
- case: the golden file's `kb-password-reset` is edited (its expected query);
- settings: the model's temperature goes from 0.0 to 0.7;
- evalcore: the runs are recorded with a newer evalcore version string (the
  store writes `evalcore.__version__`; a newer release would write its own);
- ambiguous: the server's v2 descriptions and a new model version, the same night.

Everything is simulated (sim models), but the runs, the store, the query and
the detector are the real ones. Each store must give exactly one drop, of that
case, at the change night, with that cause. Run through `bench/drift_sim.py --store`
or alone: `.venv/bin/python bench/drift_store.py`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml  # noqa: E402

from evalcore.behaviour.demo_history import GOLDEN_DIR, good_entry  # noqa: E402
from evalcore.golden.loader import load_golden_set  # noqa: E402

CASES = ("invoice-lookup", "kb-refund-policy", "kb-password-reset")
CHANGED_CASE = "kb-password-reset"
GOOD_NIGHTS = 8
BAD_NIGHTS = 3
FIRST_NIGHT = date(2026, 11, 1)
CAUSES = ("server", "model", "silent", "case", "settings", "evalcore", "ambiguous")
EDITED_QUERY = "password reset email not received"


@dataclass(frozen=True)
class Outcome:
    cause: str
    found: bool
    detail: str


def run_store_scenarios(work: Path | None = None) -> int:
    """Every cause's store; prints one line per cause and a summary line; 0 when all are found and attributed."""
    from evalcore.mcp.reference import running_reference_server

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="drift-store-") as tmp:
        folder = work or Path(tmp)
        with running_reference_server() as v1, running_reference_server(("--variant", "v2")) as v2:
            outcomes = [_scenario(cause, folder / cause, {"v1": v1, "v2": v2}) for cause in CAUSES]
    for outcome in outcomes:
        print(f"  store path, {outcome.cause}: {'ok' if outcome.found else 'WRONG'}: {outcome.detail}")
    right = sum(o.found for o in outcomes)
    print(
        f"drift through the real run path: {right}/{len(outcomes)} causes found and attributed "
        f"({len(CAUSES)} stores x {GOOD_NIGHTS + BAD_NIGHTS} runs x {len(CASES)} cases x 5 attempts; {time.perf_counter() - started:.0f}s)"
    )
    return 0 if right == len(outcomes) else 1


def _scenario(cause: str, folder: Path, servers: Mapping[str, str]) -> Outcome:
    from evalcore.behaviour.history import run_points
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.drift import detect_changes
    from evalcore.mcp.target import Target
    from evalcore.models.types import ModelSpec

    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "evals.duckdb"
    golden_path = folder / "tasks.yaml"
    script = folder / "model.yaml"
    change_night = FIRST_NIGHT + timedelta(days=GOOD_NIGHTS)
    cases = _golden_cases()
    script.write_text(yaml.safe_dump(_script(cause, change_night), sort_keys=False), encoding="utf-8")
    for offset in range(GOOD_NIGHTS + BAD_NIGHTS):
        night = FIRST_NIGHT + timedelta(days=offset)
        after = night >= change_night
        _write_golden(golden_path, cases, edited=after and cause == "case")
        temperature = 0.7 if after and cause == "settings" else 0.0
        model = ModelSpec(name=f"sim/script:{script}", temperature=temperature, max_concurrency=8)
        config = BehaviourConfig(golden_path=golden_path, models=(model,), db_path=db, runs=5, concurrency=8, run_date=night)
        url = servers["v2" if after and cause in ("server", "ambiguous") else "v1"]
        with _evalcore_version("0.1.0.post1" if after and cause == "evalcore" else None):
            asyncio.run(run_behaviour(config, Target(url=url)))
    changes = detect_changes(run_points(db))
    expected = ("ambiguous", ("server", "model")) if cause == "ambiguous" else (cause, (cause,) if cause != "silent" else ())
    found = [(c.kind, c.case_id, c.change_date, c.cause, c.changed) for c in changes]
    right = found == [("drop", CHANGED_CASE, change_night, *expected)]
    detail = "; ".join(f"{c.kind} of {c.case_id} from {c.change_date}, found {c.delay_runs} run(s) in, q = {c.q_value:.2g}: {c.attribution}" for c in changes)
    return Outcome(cause, right, detail or "nothing found")


def _golden_cases() -> list[dict[str, Any]]:
    raw = yaml.safe_load((GOLDEN_DIR / "tasks.yaml").read_text(encoding="utf-8"))
    return [case for case in raw["cases"] if case["id"] in CASES]


def _write_golden(path: Path, cases: list[dict[str, Any]], *, edited: bool) -> None:
    written = [dict(case) for case in cases]
    if edited:
        for case in written:
            if case["id"] == CHANGED_CASE:
                case["expect_args"] = {"query": EDITED_QUERY}
                case["arg_match"] = {"query": "exact"}
    path.write_text(yaml.safe_dump({"server": "reference", "cases": written}, sort_keys=False), encoding="utf-8")


def _script(cause: str, change_night: date) -> dict[str, Any]:
    """The scripted model: right on every case; from the change night, `kb-password-reset` fails attempts 1 and 2."""
    golden = load_golden_set(GOLDEN_DIR / "tasks.yaml")
    entries = {case.id: good_entry(case) for case in golden.cases if case.id in CASES}
    right = entries[CHANGED_CASE]
    wrong = {"no_call": True, "text": "Ask them to check the spam folder."}
    if cause == "case":
        # The edited case expects another query: the model's usual call now fails, as it would for a real model.
        edited = {"calls": [{"name": "search_knowledge_base", "args": {"query": EDITED_QUERY}}], "text": right["text"]}
        changed = {**edited, "attempts": {1: right, 2: right}}
    else:
        changed = {**right, "attempts": {1: wrong, 2: wrong}}
    block: dict[str, Any] = {"cases": {CHANGED_CASE: changed}}
    if cause in ("model", "ambiguous"):
        block["defaults"] = {"model_version": "sim-bench-2026-11"}
    return {"defaults": {"model_version": "sim-bench-2026-05"}, "cases": entries, "from": {change_night.isoformat(): block}}


@contextmanager
def _evalcore_version(version: str | None) -> Iterator[None]:
    """Runs recorded as a newer evalcore would record them (the store writes this module-level version string)."""
    from evalcore.store import behaviour

    if version is None:
        yield
        return
    saved = behaviour.__version__
    behaviour.__version__ = version
    try:
        yield
    finally:
        behaviour.__version__ = saved


if __name__ == "__main__":
    sys.exit(run_store_scenarios())
