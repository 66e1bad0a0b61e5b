"""Orchestration: join the shard files of one plan into ONE stored run, its metrics and gate computed once.

`read_plan` checks the files before anything is stored: every file readable
and whole, one plan (equal identities, `evalcore.behaviour.shards`), each
shard index present exactly once, each attempt in the shard its hash names,
and together exactly the plan's attempts (models x cases x runs). Any failure
is a one-line `ConfigError` naming the file, and the store is not touched.

`merge_run` then stores the run as the runner does (the run, its attempts in
one transaction, its recording of MCP exchanges: every shard's, shard by shard,
so `run --replay-run` can replay the merged run) and ends it through the
runner's own `finish`: the report is built once from the merged records
(`build_report`), gated against the last green run, and stored with its
metrics (`store.finish_run`). The merged run's record is made in one place,
`_create_merged_run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evalcore.behaviour.plan import RunPlan
from evalcore.behaviour.runner import BehaviourConfig, finish, planned_config
from evalcore.behaviour.shards import FILE_FORMAT, FILE_VERSION, differing_keys, shard_of
from evalcore.errors import ConfigError, EvalcoreError, StoreError
from evalcore.golden.limits import DEFAULT_LIMITS, GoldenLimits
from evalcore.golden.loader import load_golden_set
from evalcore.golden.model import GoldenSet
from evalcore.models.types import ModelSpec
from evalcore.paths import golden_file
from evalcore.records import AttemptRecord, RecordedExchange, RunReport
from evalcore.redaction import clip
from evalcore.store import behaviour as store
from evalcore.store.db import held_open
from evalcore.store.exchanges import write_exchanges
from evalcore.store.shard_file import ShardContents, read_shard_file


@dataclass(frozen=True)
class MergedPlan:
    """The shards of one plan, checked: the plan's identity, what the run records, every attempt in plan order, and
    the shards' recordings of MCP exchanges one after the other (shard 0's first)."""

    identity: dict[str, Any]
    run: dict[str, Any]  # from shard 0: golden_path, server_target, server_name, server_tools, models, cases, config
    records: tuple[AttemptRecord, ...]
    exchanges: tuple[RecordedExchange, ...]


def read_plan(paths: Sequence[Path]) -> MergedPlan:
    """Read and check the shard files (see the module docstring); a ConfigError naming the file when they are not one plan."""
    if not paths:
        raise ConfigError("merge needs the shard files of one plan, e.g. evalcore merge shards/*.parquet --db evals.duckdb")
    shards: list[tuple[Path, ShardContents]] = []
    for path in paths:
        try:
            contents = read_shard_file(path, file_format=FILE_FORMAT, version=FILE_VERSION)
        except EvalcoreError as exc:
            raise ConfigError(str(exc)) from exc
        _check_shape(path, contents.identity)
        shards.append((path, contents))
    first_path, first = shards[0]
    plan = first.identity["plan"]
    count = int(plan["shards"])
    by_index: dict[int, Path] = {}
    for path, contents in shards:
        identity = contents.identity
        differ = differing_keys(plan, identity["plan"])
        if differ:
            raise ConfigError(f"{path}: a shard of another plan than {first_path} (they differ in {', '.join(differ)}); merge the shards of one plan")
        index = identity.get("shard")
        if not isinstance(index, int) or not 0 <= index < count:
            raise ConfigError(f"{path}: shard index {index!r} is not one of 0..{count - 1}")
        if index in by_index:
            raise ConfigError(f"{path}: shard {index}/{count} again (also {by_index[index]}); give each shard once")
        by_index[index] = path
        stray = next((r for r in contents.records if shard_of(r.model, r.case_id, r.attempt, count) != index), None)
        if stray is not None:
            raise ConfigError(f"{path}: holds {stray.model} {stray.case_id} attempt {stray.attempt}, which belongs to another shard; the file is not a shard")
    missing = sorted(set(range(count)) - set(by_index))
    if missing:
        named = ", ".join(f"{index}/{count}" for index in missing[:10]) + (" …" if len(missing) > 10 else "")
        raise ConfigError(f"shard {named} missing (got {len(by_index)} of {count} files, e.g. {first_path}); merge every shard of the plan")
    ordered = [contents for _, contents in sorted(shards, key=lambda item: item[1].identity["shard"])]
    run = ordered[0].identity["run"]
    records = [record for contents in ordered for record in contents.records]
    _check_complete(first_path, plan, run, records)
    order = {(m["name"], case): n for n, (m, case) in enumerate((m, case) for m in run["models"] for case in run["cases"])}
    records.sort(key=lambda r: (order[(r.model, r.case_id)], r.attempt))
    return MergedPlan(plan, run, tuple(records), tuple(exchange for contents in ordered for exchange in contents.exchanges))


_PLAN_KEYS = {"golden_hash": str, "models": list, "runs": int, "max_steps": int, "run_date": str, "shards": int, "server_fingerprint": str}
_RUN_KEYS = {"golden_path": str, "server_target": str, "server_tools": list, "models": list, "cases": list, "config": dict, "plan": dict}


def _check_shape(path: Path, identity: dict[str, Any]) -> None:
    """The identity holds what a merge reads, with the types it reads them as (a damaged or hand-made file does not)."""
    plan, run = identity.get("plan"), identity.get("run")
    wrong = [] if isinstance(plan, dict) and isinstance(run, dict) else ["plan", "run"]
    if not wrong:
        assert isinstance(plan, dict) and isinstance(run, dict)
        wrong = [key for key, kind in _PLAN_KEYS.items() if not isinstance(plan.get(key), kind)]
        wrong += [f"run.{key}" for key, kind in _RUN_KEYS.items() if not isinstance(run.get(key), kind)]
        wrong += [] if all(isinstance(m, dict) and isinstance(m.get("name"), str) for m in run.get("models") or ()) else ["run.models"]
        wrong += [] if isinstance(plan.get("shards"), int) and plan["shards"] >= 1 else ["shards"]
    if wrong:
        raise ConfigError(f"{path}: its plan lacks or garbles {', '.join(sorted(set(wrong)))}; the file is not a whole shard file")


def _check_complete(first_path: Path, plan: dict[str, Any], run: dict[str, Any], records: Sequence[AttemptRecord]) -> None:
    """Together the shards hold each attempt of the plan once: models x cases x runs."""
    expected = {(m["name"], case, attempt) for m in run["models"] for case in run["cases"] for attempt in range(1, int(plan["runs"]) + 1)}
    got = [(r.model, r.case_id, r.attempt) for r in records]
    if len(got) != len(set(got)) or set(got) != expected:
        lacking = sorted(expected - set(got))
        detail = f"{len(lacking)} attempts lacking, e.g. {lacking[0]}" if lacking else "attempts outside the plan or twice"
        raise ConfigError(f"the shards of {first_path}'s plan do not add up to its {len(expected)} attempts ({detail})")


def merge_run(
    merged: MergedPlan, db: Path, *, golden_path: Path | None = None, golden_limits: GoldenLimits = DEFAULT_LIMITS, run_id: str | None = None
) -> RunReport:
    """Store the merged attempts and recording as one run and finish it as the runner does; the gated report."""
    golden = _golden_set(merged, golden_path, golden_limits)
    config = _merged_config(merged, golden, db, golden_limits)
    run_id = run_id or store.new_run_id()
    _create_merged_run(db, run_id, merged, golden, config)
    try:
        with held_open(db):  # the run's writes and its read follow on at once: one open of the store, closed before its end is written
            store.write_attempts(db, run_id, merged.records)
            write_exchanges(db, run_id, merged.exchanges)  # numbered on over the shards: the merged run's one recording
            run = store.load_run(db, run_id)
        return finish(config, run, golden, merged.records)
    except BaseException as exc:  # the run is marked failed with its reason, as a run that stopped
        store.fail_run(db, run_id, status="failed", error=clip(f"merge: {type(exc).__name__}: {exc}", 500))
        raise


def _golden_set(merged: MergedPlan, golden_path: Path | None, golden_limits: GoldenLimits) -> GoldenSet:
    """The golden set the shards ran: where they found it, or `golden_path`, checked against the plan's hash."""
    path = golden_path or golden_file(str(merged.run["golden_path"]))
    if path is None:
        raise ConfigError(f"the golden set {merged.run['golden_path']} the shards ran is not here; give its file with --golden PATH")
    golden = load_golden_set(path, limits=golden_limits).without_drafts()  # a sharded run skips draft cases
    if golden.content_hash != merged.identity["golden_hash"]:
        raise ConfigError(f"{path} is not the golden set the shards ran (its content changed); give that file with --golden PATH")
    return golden


def _merged_config(merged: MergedPlan, golden: GoldenSet, db: Path, golden_limits: GoldenLimits) -> BehaviourConfig:
    """The config `finish` gates the merged run with: the run plan every shard ran (`merged_plan`), as kind `merged`."""
    models = tuple(ModelSpec(**spec) for spec in merged.run["models"])  # as the shards ran them (a plan's are redacted)
    plan = merged_plan(merged)
    base = BehaviourConfig(golden_path=golden.path, models=models, db_path=db, golden_limits=golden_limits)
    return planned_config(base, plan, models=models, judge=plan.judge)


def merged_plan(merged: MergedPlan) -> RunPlan:
    """The merged run's plan: the one every shard ran (their identities agree), whole again (no shard) and of kind `merged`."""
    try:
        plan = RunPlan.from_json(merged.run["plan"])
    except StoreError as exc:
        raise ConfigError(f"the shards' run plan cannot be read: {exc}") from exc
    if plan.kind != "run":
        raise ConfigError(f"the shards ran a {plan.kind}, not a run: only a run's shards merge")
    return replace(plan, kind="merged", shard=None)


def _create_merged_run(db: Path, run_id: str, merged: MergedPlan, golden: GoldenSet, config: BehaviourConfig) -> None:
    """The merged run's record in the store: the one place a merge says what run it makes."""
    plan, run = merged.identity, merged.run
    assert config.run_date is not None
    store.create_run(
        db,
        run_id=run_id,
        run_date=config.run_date,
        golden_path=str(run["golden_path"]),  # the identity the shards recorded, so its history is the unsharded runs'
        golden_hash=golden.content_hash,
        server_target=str(run["server_target"]),
        server_name=run["server_name"],
        server_fingerprint=str(plan["server_fingerprint"]),
        server_tools=run["server_tools"],
        models=[m.name for m in config.models],
        runs=config.runs,
        config={**run["config"], "shards": int(plan["shards"])},
        kind=config.kind,
        plan=merged_plan(merged).to_json(),
    )
