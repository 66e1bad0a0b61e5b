"""Orchestration: run a golden set through models against a live MCP server, repeated, and hand the store one finished run.

Cases x models x attempts run concurrently (a global limit and a per-model
limit). Finished attempts go to the store in batches (with the MCP exchanges
recorded meanwhile), each batch one transaction, so a crash loses only attempts
that were never acknowledged; the runner then holds each acknowledged attempt
only as the report reads it (`report_view`). At the end the runner computes the
run's metrics once, in memory, builds the typed report, gates it against the
last green run, and hands the store the finished run (metrics and report) in
one write. A run can be resumed by id: the attempts it lacks and the errored
ones are run again. `--cache` reuses a stored attempt only when every input
that can change it is unchanged (`RunPlan.attempt_key`: model and
parameters, case, attempt number, server, judge, step limit, version).

`run_shard` runs one shard of a run (`evalcore.behaviour.shards`) the same way,
its records and its recording kept in memory only: the command writes them to the shard's file,
and `evalcore.behaviour.merge` ends the joined run through `finish`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore import __version__
from evalcore.behaviour.agent import AgentTools, run_agent
from evalcore.behaviour.conversation import at_endpoint, attempt_participants, case_models, check_state_tools, read_state
from evalcore.behaviour.faulted import faults_fired, mark_faults, robustness_rubric, run_faulted_agent, with_fault_log
from evalcore.behaviour.plan import RunPlan, script_hashes
from evalcore.behaviour.report import build_report, judge_consistency_of, report_view
from evalcore.behaviour.shards import FILE_FORMAT, FILE_VERSION, Shard, plan_identity
from evalcore.errors import ConfigError, ModelError, TargetError
from evalcore.golden.limits import DEFAULT_LIMITS, GoldenLimits
from evalcore.golden.loader import load_golden_set
from evalcore.golden.model import GoldenCase, GoldenSet
from evalcore.hosts.spec import host_identity, is_host_model
from evalcore.mcp.client import McpClient
from evalcore.mcp.configured import stored_target
from evalcore.mcp.fingerprint import canonical_json, server_fingerprint
from evalcore.mcp.mrtr import INPUT_CAPABILITIES
from evalcore.mcp.protocol.tracecontext import conversation_trace
from evalcore.mcp.recording import RecordingTarget, ServerTarget
from evalcore.mcp.transport.base import Limits
from evalcore.models.adapter import IN_PROCESS, ModelCaller, start_litellm_import
from evalcore.models.openai_route import aclose as close_model_clients
from evalcore.models.pricing import turn_cost
from evalcore.models.tool_format import CatalogRewrite
from evalcore.models.types import ModelSpec, ModelTurn, ToolCall
from evalcore.paths import golden_identity
from evalcore.records import NO_RUBRIC, AttemptRecord, JudgePolicy, JudgeTrust, JudgeVerdict, RecordedExchange, RunReport
from evalcore.redaction import clip
from evalcore.run_kinds import RunKind
from evalcore.scoring.agreement import DEFAULT_THRESHOLDS, StatusThresholds, agreements, find
from evalcore.scoring.attempt import score_attempt
from evalcore.scoring.gate import decide
from evalcore.scoring.scorers.robustness import robustness_record
from evalcore.store import behaviour as store
from evalcore.store.db import held_open
from evalcore.store.exchanges import write_exchanges
from evalcore.store.judge_labels import labelled_verdicts
from evalcore.taxonomy import ErrorKind, attempt_error
from evalcore.telemetry import spans
from evalcore.telemetry.setup import tracing

if TYPE_CHECKING:  # the proxy module imports uvicorn and starlette: only a run with a fault to inject loads it
    from evalcore.behaviour.fault_proxy import FaultProxy
    from evalcore.hosts.attempt import HostRuntime

ProgressCallback = Callable[[int, int], None]
_NO_RECORD: Any = object()  # a wake-up with nothing new, so a waiting batch still gets written


@dataclass(frozen=True)
class BehaviourConfig:
    golden_path: Path
    models: tuple[ModelSpec, ...]
    db_path: Path
    runs: int = 5
    concurrency: int = 8
    use_cache: bool = False
    judge: ModelSpec | None = None
    max_steps: int = 8
    run_date: date | None = None  # the date the run stands for; today by default
    max_drop: float = 0.02  # the run gate: largest tolerated drop of a metric below the last green run
    max_error_rate: float = 0.0  # errored attempts / attempts a run may have and still pass its gate (never be green)
    # A batch is one short-lived DuckDB connection, and opening one builds DuckDB's whole catalog (~20-25 ms of CPU)
    # whatever it writes: at 0.5 s a batch, the store took a quarter of a short run's CPU (bench/profile_run.py).
    # batch_seconds, not batch_size, bounds how long a finished attempt waits to be stored (what a crash can lose).
    batch_size: int = 500
    batch_seconds: float = 2.0
    limits: Limits = field(default_factory=lambda: Limits(read_timeout=30.0))
    fault_timeout_s: float = 5.0  # read timeout of the call a `timeout` fault holds: the fault ends after it
    golden_limits: GoldenLimits = DEFAULT_LIMITS  # the size limits the golden file must keep (evalcore.golden.limits)
    # What the model sees changed of the server's tools (`compare --candidate-tools`, `perturb`); calls go to the real ones
    catalog: CatalogRewrite = field(default_factory=CatalogRewrite)
    kind: RunKind = "run"  # what the run is (evalcore.run_kinds): only `run` and `merged` runs stand for the server
    include_drafts: bool = False  # grade draft cases too (`run --include-drafts`, kind `draft-run`); else they are skipped
    replay_of: str | None = None  # the recorded run this run's server is a replay of (`run --replay-run`, kind `replay`)
    # `--judge-policy`: `always` (the judge's verdicts enter `passed` and the gate) or `trusted` (only a trusted judge's do)
    judge_policy: JudgePolicy = "always"
    judge_thresholds: StatusThresholds = DEFAULT_THRESHOLDS  # when a judge is trusted (evalcore.scoring.agreement)
    judge_trust: JudgeTrust | None = None  # the judge's standing: read from the labels as the run starts, or its plan's
    judge_repeats: int = 1  # `--judge-repeats K` (odd): each attempt graded K times, the majority its verdict

    @property
    def golden_id(self) -> str:
        """The golden set's identity in the store (one history however its path was typed; see evalcore.paths)."""
        return golden_identity(self.golden_path)


@dataclass(frozen=True)
class WorkItem:
    model: ModelSpec
    case: GoldenCase
    attempt: int
    case_hash: str  # of `case`, computed once per case and run


# Keys that count in a case's hash only when set, so a case written before they existed keeps its hash.
_CONVERSATION_FIELDS = frozenset({"user", "sampling_model", "roots", "expect_input_requests", "expect_state", "expect_calls", "expect_set"})
_UNHASHED_FIELDS = frozenset({"line", "review"})  # where a case is written, and who vouched for it: not what it asks


def case_hash(case: GoldenCase) -> str:
    """Content hash of a case (its line number excluded, its system prompt included), for caching and drift attribution.

    The multi-turn keys count only when a case sets them, so a case written before they existed keeps its hash.
    """
    content = {k: v for k, v in asdict(case).items() if k not in _UNHASHED_FIELDS and not (k in _CONVERSATION_FIELDS and v in (None, ()))}
    if "expect_calls" in content:
        content["expect_calls"] = [{k: v for k, v in call.items() if k != "line"} for call in content["expect_calls"]]
    return hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()[:16]


async def run_behaviour(
    config: BehaviourConfig,
    target: ServerTarget,
    *,
    resume_run_id: str | None = None,
    new_run_id: str | None = None,
    progress: ProgressCallback | None = None,
) -> RunReport:
    """Run (or resume) a behaviour evaluation and return its gated report; the report is also stored with the run.

    Each attempt is traced (see `evalcore.telemetry`) when an OTLP endpoint is configured.
    """
    with tracing():
        return await _run_behaviour(config, target, resume_run_id=resume_run_id, new_run_id=new_run_id, progress=progress)


async def _run_behaviour(
    config: BehaviourConfig,
    target: ServerTarget,
    *,
    resume_run_id: str | None,
    new_run_id: str | None,
    progress: ProgressCallback | None,
) -> RunReport:
    start_litellm_import([*config.models, config.judge])  # when one takes litellm: it overlaps discovery and the run record
    target = recording = RecordingTarget(target)  # every exchange with the server is kept with the run (replayable)
    client = McpClient(target.open(config.limits), limits=config.limits, client_capabilities=INPUT_CAPABILITIES)
    try:
        discover, tools, golden, fingerprint = await _surface_and_golden(config, client, target)
        if resume_run_id is not None:
            run_id, config = resumed_config(config, resume_run_id, golden, fingerprint)
            await asyncio.to_thread(store.reopen_run, config.db_path, run_id)
        else:
            run_id = new_run_id or store.new_run_id()
            config = with_judge_trust(config, golden)
        plan = build_plan(config, golden, fingerprint, str(target))
        if resume_run_id is None:
            await asyncio.to_thread(
                store.create_run,
                config.db_path,
                run_id=run_id,
                run_date=config.run_date or date.today(),
                golden_path=config.golden_id,
                golden_hash=golden.content_hash,
                server_target=stored_target(target),
                server_name=_server_name(discover),
                server_fingerprint=fingerprint,
                server_tools=[{"name": t.get("name"), "description": t.get("description")} for t in tools],
                models=[m.name for m in config.models],
                runs=config.runs,
                config=_config_json(config),
                kind=plan.kind,
                plan=plan.to_json(),
            )
        resuming = resume_run_id is not None
        last_batch: list[AttemptRecord] = []  # the attempts the batch writer left to the run's last open of the store
        try:
            with _fault_proxy(config, golden, target) as proxy, _host_runtime(config, target) as hosts:
                taken = recording.recorder.take  # each batch stores the exchanges recorded since the last one
                records = await _execute(
                    config,
                    run_id,
                    golden,
                    client,
                    tools,
                    plan,
                    progress,
                    IN_PROCESS,
                    proxy,
                    resuming=resuming,
                    last_batch=last_batch,
                    hosts=hosts,
                    exchanges=taken,
                )
        except BaseException as exc:
            status = "cancelled" if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError) else "failed"
            try:
                if last_batch:
                    store.write_attempts(config.db_path, run_id, last_batch, replacing_errored=resuming)
                store.fail_run(config.db_path, run_id, status=status, error=clip(f"{type(exc).__name__}: {exc}", 500))
            finally:
                write_exchanges(config.db_path, run_id, recording.recorder.take())
            raise
        # The run's last writes and its read follow on at once, with no await between them (another run on this event
        # loop cannot use the held store meanwhile): one open of the store, closed before `finish` writes the end.
        with held_open(config.db_path):
            if last_batch:
                store.write_attempts(config.db_path, run_id, last_batch, replacing_errored=resuming)
            write_exchanges(config.db_path, run_id, recording.recorder.take())
            run = store.load_run(config.db_path, run_id)
        return finish(config, run, golden, records)
    finally:
        await client.aclose()
        await close_model_clients()


def finish(config: BehaviourConfig, run: Mapping[str, Any], golden: GoldenSet, records: Sequence[AttemptRecord]) -> RunReport:
    """Compute the run's metrics once, build and gate its report, and hand the store the finished run; the gated report.
    A list of `records` is emptied once the report is built (the caller hands it over).

    The baseline is the newest run that may be one (`evalcore.run_kinds.eligibility`) of the same golden set, by content:
    a golden set edited since its last baseline is gated as a first run, and the gate says so.
    """
    report, metric_sets = build_report(run, golden, records, config.models, max_error_rate=config.max_error_rate)
    report = replace(report, judge=config.judge_trust, judge_consistency=judge_consistency_of(records, config.judge_repeats))
    if isinstance(records, list):  # the runner's own list, handed over: its attempts are given back before the writes
        records.clear()
    golden_path, golden_hash = run["golden_path"], run["golden_hash"]
    notes: list[str] = []
    with held_open(config.db_path):  # the baseline's reads in one open of the store
        baseline = store.last_green_report(config.db_path, golden_path=golden_path, golden_hash=golden_hash, exclude_run=report.run_id)
        if baseline is None:
            changed = store.changed_golden_baseline(config.db_path, golden_path=golden_path, golden_hash=golden_hash, exclude_run=report.run_id)
            if changed is not None:
                notes.append(f"{golden_path} changed since baseline run {changed} (its content hash differs): no baseline for this content yet")
    gate = decide(report.to_json(), baseline, max_drop=config.max_drop, incomplete=report.incomplete, kind=config.kind, notes=tuple(notes))
    gated = replace(report, gate=gate)
    store.finish_run(config.db_path, gated, metric_sets)  # the caller holds no open of the store: see `finish_run`
    return gated


@dataclass(frozen=True)
class ShardRun:
    """One shard's attempts, in memory, with its identity (`evalcore.behaviour.shards`) and what the merged run records."""

    shard: Shard
    identity: dict[str, Any]  # the plan's identity (shards.plan_identity)
    run: dict[str, Any]  # golden_path (its identity), server_target, server_name, server_tools, models, cases, config
    records: tuple[AttemptRecord, ...]  # in (model, case, attempt) order of the plan
    exchanges: tuple[RecordedExchange, ...]  # the shard's MCP exchanges, recorded as a run records them (replayable once merged)

    def to_json(self) -> dict[str, Any]:
        """The shard file's plan row (`evalcore.store.shard_file`)."""
        return {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "plan": self.identity,
            "shard": self.shard.index,
            "attempts": len(self.records),
            "exchanges": len(self.exchanges),
            "run": self.run,
        }


async def run_shard(config: BehaviourConfig, target: ServerTarget, shard: Shard, *, progress: ProgressCallback | None = None) -> ShardRun:
    """Run the attempts of one shard of the plan `config` describes, in memory: nothing goes to the store.

    The run's date is fixed here (today unless given), since the sim models read it and every shard must agree.
    """
    if config.use_cache:
        raise ConfigError("--shard does not combine with --cache: a shard reads and writes no store")
    config = replace(config, run_date=config.run_date or date.today())
    assert config.run_date is not None
    with tracing():
        start_litellm_import([*config.models, config.judge])
        target = recording = RecordingTarget(target)  # as a run records, so the merged run is replayable
        client = McpClient(target.open(config.limits), limits=config.limits, client_capabilities=INPUT_CAPABILITIES)
        try:
            discover, tools, golden, fingerprint = await _surface_and_golden(config, client, target)
            config = with_judge_trust(config, golden)
            with _fault_proxy(config, golden, target) as proxy, _host_runtime(config, target) as hosts:
                plan = build_plan(config, golden, fingerprint, str(target), shard)
                records = await _execute(config, "", golden, client, tools, plan, progress, IN_PROCESS, proxy, shard=shard, hosts=hosts)
        finally:
            await client.aclose()
    identity = plan_identity(plan, shard.count)
    run = {
        "golden_path": config.golden_id,
        "server_target": stored_target(target),
        "server_name": _server_name(discover),
        "server_tools": [{"name": t.get("name"), "description": t.get("description")} for t in tools],
        "models": [asdict(m) for m in config.models],
        "cases": [case.id for case in golden.cases],
        "config": _config_json(config),
        "plan": plan.to_json(),  # the merged run's plan is this one, as `merged`
    }
    order = {(m.name, case.id): n for n, (m, case) in enumerate((m, case) for m in config.models for case in golden.cases)}
    ordered = tuple(sorted(records, key=lambda r: (order[(r.model, r.case_id)], r.attempt)))
    return ShardRun(shard, identity, run, ordered, tuple(recording.recorder.take()))


async def _surface_and_golden(config: BehaviourConfig, client: McpClient, target: ServerTarget) -> tuple[dict[str, Any], list[dict[str, Any]], GoldenSet, str]:
    """The server's discover result and tools, the golden set checked against them, and the server's fingerprint."""
    discover, tools = await _server_surface(client, target)
    golden = load_golden_set(config.golden_path, tools=tools, limits=config.golden_limits)  # arguments checked against the schemas
    golden = golden if config.include_drafts else drafts_skipped(golden)
    check_state_tools(golden, tools)
    start_litellm_import([at_endpoint(name, model.api_base) for case in golden.cases for model in config.models for name in case_models(case)])
    return discover, tools, golden, server_fingerprint(discover, tools)


def drafts_skipped(golden: GoldenSet) -> GoldenSet:
    """The set without its draft cases; a set of nothing but drafts is refused, as there would be nothing to grade."""
    kept = golden.without_drafts()
    if not kept.cases:
        raise ConfigError(f"{golden.path}: every case is a draft (review: {{status: draft}}); run with --include-drafts, or accept them first")
    return kept


async def _server_surface(client: McpClient, target: ServerTarget) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    discover = await client.discover()
    if discover.failure is not None and discover.failure.kind in ("connect", "closed"):
        raise TargetError(f"cannot reach {target}: {discover.failure.detail}")
    listing = await client.list_all("tools/list")
    if listing.failed is not None:
        raise TargetError(f"{target} did not list its tools: {listing.failed.describe()} (run `python -m evalcore conformance` on it)")
    return discover.result or {}, listing.items


def _fault_proxy(config: BehaviourConfig, golden: GoldenSet, target: ServerTarget) -> contextlib.AbstractContextManager[FaultProxy | None]:
    """The fault proxy in front of the target, when any case injects a fault."""
    if not any(case.inject is not None for case in golden.cases):
        return contextlib.nullcontext()
    from evalcore.behaviour.fault_proxy import running_fault_proxy

    # The proxy holds a `timeout` fault past the client's read timeout, so the client is the one that gives up.
    return running_fault_proxy(target, hold_s=config.fault_timeout_s + 2.0, limits=config.limits)


def _host_runtime(config: BehaviourConfig, target: ServerTarget) -> contextlib.AbstractContextManager[HostRuntime | None]:
    """The recording tap and the sim endpoint agent hosts need, when a model is a host (`host/...`)."""
    if not any(is_host_model(model.name) for model in config.models):
        return contextlib.nullcontext()
    from evalcore.hosts.attempt import host_runtime

    return host_runtime(target, config.limits)


def resumed_config(config: BehaviourConfig, run_id: str, golden: GoldenSet, fingerprint: str) -> tuple[str, BehaviourConfig]:
    """The run to resume and its config as its stored plan says: kind, models, judge, limits, catalog rewrite, replayed run."""
    run = store.load_run(config.db_path, run_id)
    if run["effective_status"] == "complete" and not store.errored_attempt_keys(config.db_path, run_id):
        raise ConfigError(f"run {run_id} is already complete, with every attempt scored; nothing to resume")
    if run["effective_status"] == "running":
        raise ConfigError(f"run {run_id} is still running (pid {run['pid']}); resume it only after it stopped or crashed")
    if run["golden_hash"] != golden.content_hash:
        raise ConfigError(f"the golden set changed since run {run_id} started; start a new run instead of resuming")
    if run["server_fingerprint"] != fingerprint:
        raise ConfigError(f"the server's tools changed since run {run_id} started; start a new run instead of resuming")
    if not run.get("plan_json"):
        raise ConfigError(f"run {run_id} was stored by an evalcore without run plans; it cannot be resumed as it was planned: start a new run")
    plan = RunPlan.from_json(json.loads(run["plan_json"]))
    if (plan.kind == "draft-run") != config.include_drafts:
        raise ConfigError(f"run {run_id} is a {plan.kind}: resume it {'with' if plan.kind == 'draft-run' else 'without'} --include-drafts, as it ran")
    if plan.replay_of != config.replay_of:
        raise ConfigError(f"run {run_id} is a {plan.kind}{f' of run {plan.replay_of}' if plan.replay_of else ''}: resume it against what it ran on")
    # A stored spec's api_base is redacted: the one given now (the same endpoint, with its credentials) is used.
    given = {spec.name: spec for spec in config.models}
    models = tuple(replace(spec, api_base=given[spec.name].api_base if spec.name in given else spec.api_base) for spec in plan.models)
    judge = replace(plan.judge, api_base=config.judge.api_base) if plan.judge is not None and config.judge is not None else plan.judge
    restored = planned_config(config, plan, models=models, judge=judge)
    return run_id, restored


def rubric_hash(golden: GoldenSet) -> str | None:
    """sha256 of the golden set's rubric file, which the judge grades against; None without one."""
    return hashlib.sha256(golden.rubric_text.encode("utf-8")).hexdigest() if golden.rubric_text is not None else None


def with_judge_trust(config: BehaviourConfig, golden: GoldenSet) -> BehaviourConfig:
    """`config` with its judge's standing as the stored labels show it now (`evalcore.scoring.agreement`), for the run
    plan to carry; unchanged without a judge, or when it has one already (a resumed run keeps its plan's)."""
    if config.judge is None or config.judge_trust is not None:
        return config
    rubric = rubric_hash(golden) or NO_RUBRIC
    found = find(agreements(labelled_verdicts(config.db_path)), config.judge.name, rubric, config.judge_thresholds)
    trust = JudgeTrust(config.judge.name, rubric, found.status, found.kappa, found.n, config.judge_policy)
    return replace(config, judge_trust=trust)


def planned_config(config: BehaviourConfig, plan: RunPlan, *, models: tuple[ModelSpec, ...], judge: ModelSpec | None) -> BehaviourConfig:
    """`config` set as `plan` says (kind, limits, date, gate bounds, catalog, replayed run), with these model specs (a
    plan's keep their endpoints redacted: the caller gives the ones to call)."""
    return replace(
        config,
        kind=plan.kind,
        models=models,
        runs=plan.runs,
        judge=judge,
        max_steps=plan.max_steps,
        fault_timeout_s=plan.fault_timeout_s,
        run_date=date.fromisoformat(plan.run_date),
        max_drop=plan.max_drop,
        max_error_rate=plan.max_error_rate,
        catalog=plan.catalog,
        replay_of=plan.replay_of,
        judge_trust=plan.judge_trust,
        judge_policy=plan.judge_trust.policy if plan.judge_trust is not None else config.judge_policy,
        judge_repeats=plan.judge_repeats,
    )


def build_plan(config: BehaviourConfig, golden: GoldenSet, fingerprint: str, target: str, shard: Shard | None = None) -> RunPlan:
    """The run plan of `config` on this golden set and server (evalcore.behaviour.plan)."""
    return RunPlan(
        kind=config.kind,
        golden_path=config.golden_id,
        golden_hash=golden.content_hash,
        cases=tuple(case.id for case in golden.cases),
        rubric_sha256=rubric_hash(golden),
        models=config.models,
        model_scripts=script_hashes(config.models, _read_script),
        host_versions={model.name: host_identity(model.name) for model in config.models if is_host_model(model.name)},
        runs=config.runs,
        judge=config.judge,
        max_steps=config.max_steps,
        fault_timeout_s=config.fault_timeout_s,
        run_date=(config.run_date or date.today()).isoformat(),
        max_drop=config.max_drop,
        max_error_rate=config.max_error_rate,
        target=target,
        server_fingerprint=fingerprint,
        evalcore_version=__version__,
        catalog=config.catalog,
        replay_of=config.replay_of,
        shard=str(shard) if shard is not None else None,
        judge_trust=config.judge_trust,
        judge_repeats=config.judge_repeats,
    )


def _read_script(path: str) -> bytes | None:
    try:
        return Path(path).expanduser().read_bytes()
    except OSError:
        return None


async def _execute(
    config: BehaviourConfig,
    run_id: str,
    golden: GoldenSet,
    client: McpClient,
    tools: Sequence[Mapping[str, Any]],
    plan: RunPlan,
    progress: ProgressCallback | None,
    models: ModelCaller,
    proxy: FaultProxy | None = None,
    *,
    resuming: bool = False,
    shard: Shard | None = None,
    last_batch: list[AttemptRecord] | None = None,
    hosts: HostRuntime | None = None,
    exchanges: Callable[[], list[RecordedExchange]] | None = None,
) -> list[AttemptRecord]:
    """Run every attempt the run still lacks (a resume reruns the errored ones too); every record of the run, in memory.

    A record the store has acknowledged is held as the report reads it (`report_view`: no transcript, shared
    scores), so what a run holds per finished attempt stays small however many attempts it has; the rest, up to a
    batch, are held whole. With `exchanges` (the run's recorder's `take`), each batch also stores the MCP exchanges
    recorded since the last one. With a `shard`, only that shard's attempts run and nothing is stored (`run_shard`
    writes them, whole, to its file). With `last_batch`, the attempts not yet stored when the last one finishes are
    put there for the caller to store (with the run's last writes, or as it fails), instead of being written here.
    """
    interned: dict[Any, Any] = {}  # the run's equal scores, shared (`report_view`)
    records: dict[tuple[str, str, int], AttemptRecord] = {}  # in the order they were kept or finished
    if resuming:  # the errored attempts run again; each is replaced when its rerun is stored (`write_attempts`)
        for record in store.load_attempt_records(config.db_path, run_id):
            if not record.errored:
                records[_attempt_id(record)] = report_view(record, interned)
    done = set(records)
    hashes = {case.id: case_hash(case) for case in golden.cases}
    items = [
        WorkItem(model, case, attempt, hashes[case.id])
        for model in config.models
        for case in golden.cases
        for attempt in range(1, config.runs + 1)
        if (model.name, case.id, attempt) not in done and (shard is None or shard.holds(model.name, case.id, attempt))
    ]
    total, finished = len(items) + len(done), len(done)
    if progress:
        progress(finished, total)
    queue: asyncio.Queue[AttemptRecord | None] = asyncio.Queue()

    def stored(batch: Sequence[AttemptRecord]) -> None:
        for record in batch:
            records[_attempt_id(record)] = report_view(record, interned)

    writer = (
        asyncio.create_task(_batch_writer(config, run_id, queue, replacing_errored=resuming, last_batch=last_batch, exchanges=exchanges, stored=stored))
        if shard is None
        else None
    )
    cached = _reusable_attempts(config, plan, run_id) if config.use_cache else {}
    agent_tools = AgentTools.from_mcp(tools, config.catalog)
    overall = asyncio.Semaphore(max(1, config.concurrency))
    per_model = {m.name: asyncio.Semaphore(max(1, m.max_concurrency)) for m in config.models}
    run_date = (config.run_date or date.today()).isoformat()

    async def one(item: WorkItem) -> None:
        nonlocal finished
        hit = cached.get(plan.attempt_key(item.model, item.case_hash, item.attempt)) if cached else None
        if hit is not None:
            record = _record_from_cache(item, hit)
        else:
            async with overall, per_model[item.model.name]:
                record = await _attempt(config, golden, client, agent_tools, item, run_date, models, proxy, hosts)
        records[_attempt_id(record)] = record
        if writer is not None:
            await queue.put(record)
        finished += 1
        if progress:
            progress(finished, total)

    try:
        # As many workers as attempts may run at once, each taking the next item: a task per item would hold every
        # attempt's coroutine from the start (some 1.5 KB each), and the items start in the same order either way.
        pending = iter(items)

        async def worker() -> None:
            for item in pending:
                await one(item)

        await asyncio.gather(*(worker() for _ in range(min(len(items), max(1, config.concurrency)))))
    finally:
        if writer is not None:
            await queue.put(None)
            await writer  # every finished attempt is acknowledged before we return or re-raise
    return list(records.values())


def _attempt_id(record: AttemptRecord) -> tuple[str, str, int]:
    return record.model, record.case_id, record.attempt


async def _batch_writer(
    config: BehaviourConfig,
    run_id: str,
    queue: asyncio.Queue[AttemptRecord | None],
    *,
    replacing_errored: bool = False,
    last_batch: list[AttemptRecord] | None = None,
    exchanges: Callable[[], list[RecordedExchange]] | None = None,
    stored: Callable[[Sequence[AttemptRecord]], None] | None = None,
) -> None:
    """Store finished attempts in batches: when `batch_size` are waiting, when the oldest waited `batch_seconds`, and at
    the end (or, with `last_batch`, hand the end's batch over in it, unwritten). Each batch also stores the exchanges
    `exchanges` gives, and once the store has it, `stored` is told."""
    batch: list[AttemptRecord] = []
    oldest = time.monotonic()
    closing = False
    while not closing:
        try:
            record = await asyncio.wait_for(queue.get(), config.batch_seconds)
        except TimeoutError:
            record = _NO_RECORD
        if record is None:
            closing = True
        elif isinstance(record, AttemptRecord):
            if not batch:
                oldest = time.monotonic()
            batch.append(record)
        if closing and last_batch is not None:
            last_batch.extend(batch)
            return
        if batch and (closing or len(batch) >= config.batch_size or time.monotonic() - oldest >= config.batch_seconds):
            await asyncio.to_thread(_store_batch, config.db_path, run_id, batch, exchanges, replacing_errored)
            if stored is not None:
                stored(batch)
            batch = []


def _store_batch(
    path: Path, run_id: str, batch: Sequence[AttemptRecord], exchanges: Callable[[], list[RecordedExchange]] | None, replacing_errored: bool
) -> None:
    """One batch of attempts, and the exchanges recorded so far, in one open of the store."""
    with held_open(path):
        store.write_attempts(path, run_id, batch, replacing_errored=replacing_errored)
        if exchanges is not None:
            write_exchanges(path, run_id, exchanges())


async def _attempt(
    config: BehaviourConfig,
    golden: GoldenSet,
    client: McpClient,
    tools: AgentTools,
    item: WorkItem,
    run_date: str,
    models: ModelCaller,
    proxy: FaultProxy | None = None,
    hosts: HostRuntime | None = None,
) -> AttemptRecord:
    with spans.attempt_span(item.model, item.case.id, item.attempt) as span:
        record = await _attempt_record(config, golden, client, tools, item, run_date, models, proxy, hosts)
        fault = item.case.inject.fault if item.case.inject is not None else None
        span.set_attributes(spans.attempt_outcome_attributes(passed=record.score.passed, stop_reason=record.stop_reason, fault=fault))
    return record


async def _attempt_record(
    config: BehaviourConfig,
    golden: GoldenSet,
    client: McpClient,
    tools: AgentTools,
    item: WorkItem,
    run_date: str,
    models: ModelCaller,
    proxy: FaultProxy | None,
    hosts: HostRuntime | None = None,
) -> AttemptRecord:
    context = {"case_id": item.case.id, "attempt": item.attempt, "run_date": run_date}
    injection = item.case.inject
    responder, user = attempt_participants(item.case, item.model, models, context)
    with conversation_trace():  # one trace per conversation, so the state read below sees this attempt's changes
        events: tuple[Any, ...] = ()
        if hosts is not None and is_host_model(item.model.name):  # one headless host session (evalcore.hosts)
            from evalcore.hosts.attempt import run_host_attempt, unsupported

            case = item.case
            if injection is not None:  # never scored as if the fault had been there
                transcript = unsupported(f"{item.model.name}: fault injection does not reach through an agent host yet")
            else:
                transcript = await run_host_attempt(hosts, item.model, prompt=case.prompt, system=case.system, context=context, max_steps=config.max_steps)
        elif injection is not None and proxy is not None:
            transcript, events = await run_faulted_agent(
                proxy,
                injection,
                prompt=item.case.prompt,
                system=item.case.system,
                model=item.model,
                context=context,
                max_steps=config.max_steps,
                limits=config.limits,
                fault_timeout_s=config.fault_timeout_s,
                models=models,
                responder=responder,
                user=user,
                catalog=config.catalog,
            )
            transcript = mark_faults(transcript, events)
        else:
            transcript = await run_agent(
                prompt=item.case.prompt,
                system=item.case.system,
                model=item.model,
                mcp=client,
                tools=tools,
                context=context,
                max_steps=config.max_steps,
                models=models,
                responder=responder,
                user=user,
            )
        if item.case.expect_state and transcript.stop_reason != "model_error":
            transcript = replace(transcript, state=await read_state(client, item.case.expect_state))
    rubric = robustness_rubric(item.case) if injection is not None else item.case.rubric
    judge: JudgeVerdict | None = None
    errored = attempt_error(transcript.stop_reason, transcript.error, [(e.error_type, e.error) for e in transcript.executions])
    error_kind: ErrorKind | None = errored[0] if errored else None
    error_reason = clip(errored[1], 500) if errored else None
    judge_expected = config.judge is not None and bool(rubric)
    if judge_expected and config.judge is not None and transcript.stop_reason == "final" and error_kind is None:
        from evalcore.models.judge import judge_answer

        try:
            verdicts = [
                await judge_answer(
                    config.judge,
                    rubric=golden.rubric_text or "",
                    case_rubric=rubric,
                    prompt=item.case.prompt,
                    tool_calls_summary=_calls_summary(transcript.tool_calls),
                    final_text=transcript.final_text,
                    models=models,
                    context=context if repeat == 1 else {**context, "judge_repeat": repeat},
                )
                for repeat in range(1, config.judge_repeats + 1)
            ]
            judge = majority_verdict(verdicts)
        except ModelError as exc:  # the rubric cannot be skipped: the attempt is errored (judge), never passed without it
            error_kind, error_reason = "judge", clip(f"judge error: {exc}", 500)
    fired = faults_fired(injection, events) if injection is not None else 0
    score = score_attempt(
        item.case,
        transcript.tool_calls,
        judge,
        executions=transcript.executions,
        final_text=transcript.final_text,
        faults_fired=fired,
        errored=error_reason,
        user_turns=transcript.user_turns,
        state=transcript.state,
        stop_reason=transcript.stop_reason,
        model_turns=len(transcript.turns),
        judge_expected=judge_expected,
        refused=transcript.refused,
        ungated=frozenset() if config.judge_trust is None or config.judge_trust.gated else frozenset({"judge"}),
    )
    robustness = robustness_record(item.case, {s.scorer: s for s in score.scores})
    stored_transcript = transcript.to_json()
    if injection is not None:
        stored_transcript = with_fault_log(stored_transcript, injection, events)
    turns = (*transcript.turns, *responder.sampling_turns)  # sampling for the server is the attempt's spend too
    return AttemptRecord(
        model=item.model.name,
        case_id=item.case.id,
        attempt=item.attempt,
        case_hash=item.case_hash,
        case_kind=item.case.kind,
        simulated=item.model.simulated,
        model_version=next((t.model_version for t in reversed(transcript.turns) if t.model_version), None),
        score=score,
        tool_calls=transcript.tool_calls,
        final_text=transcript.final_text,
        stop_reason=transcript.stop_reason,
        error=transcript.error,
        latency_ms=sum(t.latency_ms for t in turns) + transcript.failed_call_ms if turns or transcript.failed_call_ms else None,
        input_tokens=_sum_or_none(t.input_tokens for t in turns),
        output_tokens=_sum_or_none(t.output_tokens for t in turns),
        cost_usd=attempt_cost(item.model, turns),
        retries=sum(t.retries for t in turns) + transcript.retries,
        transcript_json=stored_transcript,
        judge=judge,
        robustness=robustness,
        error_kind=error_kind,
    )


def majority_verdict(verdicts: Sequence[JudgeVerdict]) -> JudgeVerdict:
    """One grading's verdict as it is; of several (an odd number), the majority's, with the first reason that agrees with
    it and every vote kept (`votes`), so the report can tell how often the judge changed its mind."""
    if len(verdicts) == 1:
        return verdicts[0]
    votes = tuple(verdict.passed for verdict in verdicts)
    passed = sum(votes) * 2 > len(votes)
    chosen = next(verdict for verdict in verdicts if verdict.passed == passed)
    scores = [verdict.score for verdict in verdicts if verdict.score is not None]
    score = sum(scores) / len(scores) if len(scores) == len(verdicts) else None
    reason = f"{sum(v == passed for v in votes)} of {len(votes)} gradings: {chosen.reason}"
    return replace(chosen, passed=passed, score=score, reason=reason, votes=votes)


def _reusable_attempts(config: BehaviourConfig, plan: RunPlan, run_id: str) -> dict[str, AttemptRecord]:
    """Stored attempts of runs that may serve the cache, on this server and these models, by their cache key, computed
    from each one's own stored plan (`RunPlan.attempt_key`); the newest for a key wins."""
    if config.kind not in ("run", "merged"):
        return {}  # an arm or a replay is measured afresh: a cache hit would stand for another catalog or server
    found = store.cached_attempts(config.db_path, server_fingerprint=plan.server_fingerprint, models=[m.name for m in config.models], exclude_run=run_id)
    plans: dict[str, RunPlan] = {}
    reusable: dict[str, AttemptRecord] = {}
    for record, plan_json in found:
        stored = plans.get(plan_json)
        if stored is None:
            stored = plans[plan_json] = RunPlan.from_json(json.loads(plan_json))
        spec = stored.model(record.model)
        if spec is not None:
            reusable[stored.attempt_key(spec, record.case_hash, record.attempt)] = record
    return reusable


def _record_from_cache(item: WorkItem, record: AttemptRecord) -> AttemptRecord:
    """A stored attempt reused for this run's item (its `cached_from` names the run that made it)."""
    return replace(record, model=item.model.name, case_id=item.case.id, attempt=item.attempt, case_kind=item.case.kind)


def _calls_summary(calls: Sequence[ToolCall]) -> str:
    return "\n".join(f"{c.name}({json.dumps(dict(c.arguments))})" for c in calls) or "(no tool calls)"


def attempt_cost(model: ModelSpec, turns: Sequence[ModelTurn]) -> float | None:
    """What an attempt cost: its turns' costs summed; 0 for an attempt that billed nothing (no turn came back) when the
    model's price is known; None when any turn's price, or the model's, is unknown (a cost is never guessed)."""
    if not turns:
        return turn_cost(model, 0, 0)
    return _sum_or_none(t.cost_usd for t in turns)


def _sum_or_none(values: Any) -> Any:
    collected = list(values)
    return None if not collected or any(v is None for v in collected) else sum(collected)


def _server_name(discover: Mapping[str, Any]) -> str | None:
    meta = discover.get("_meta")
    info = meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
    return f"{info.get('name')} {info.get('version', '')}".strip() if isinstance(info, dict) else None


def _config_json(config: BehaviourConfig) -> dict[str, Any]:
    """How the run was scheduled and set, for a reader (what decides its attempts is its plan); model specs hold names and
    settings only (keys live in the environment)."""
    return {
        "models": [asdict(m) for m in config.models],
        "judge": asdict(config.judge) if config.judge else None,
        "max_steps": config.max_steps,
        "concurrency": config.concurrency,
        "use_cache": config.use_cache,
        **({"catalog": config.catalog.to_json()} if config.catalog.to_json() else {}),
        **({"replay_of": config.replay_of} if config.replay_of else {}),
        "started": datetime.now(UTC).isoformat(),
    }
