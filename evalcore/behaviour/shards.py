"""Orchestration (pure part): which shard of a run an attempt belongs to, and the identity of the plan a shard is part of.

A run's attempts (model x case x attempt number) are split over K shards by a
stable hash: sha256 of the canonical JSON of `[model, case id, attempt]`, its
first 8 bytes as an unsigned integer, modulo K. The same attempt lands in the
same shard on every machine and Python (never `hash()`, which is salted per
process).

A shard file carries its run plan (`evalcore.behaviour.plan.RunPlan`) and the plan's identity (`plan_identity`,
derived from it): everything that
changes what an attempt does or how the run is judged (the golden set's hash,
the models and their parameters, runs per case, the judge and rubric, the step
limit, the fault timeout, the evalcore version, the server's fingerprint, the
run date the sim models read, the gate's bounds) and K. `evalcore merge` joins
only files whose identities are equal, one file per shard index, and only files
of this `FILE_VERSION` (`evalcore.store.shard_file` lays the file out).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from evalcore.behaviour.plan import RunPlan, catalog_json, model_parameters
from evalcore.errors import ConfigError
from evalcore.mcp.fingerprint import canonical_json

INDEX_VARIABLE: Final = "JOB_COMPLETION_INDEX"  # set by a Kubernetes Indexed Job in each pod
MAX_SHARDS: Final = 10_000
FILE_FORMAT: Final = "evalcore-shard"
FILE_VERSION: Final = 2  # 2: errored attempts whole, every score's reasons, the MCP exchanges (a replayable merge)


def shard_of(model: str, case_id: str, attempt: int, count: int) -> int:
    """The shard (0..count-1) that runs `attempt` of `case_id` on `model`: sha256 of `[model, case_id, attempt]`, mod count."""
    digest = hashlib.sha256(canonical_json([model, case_id, attempt]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count`: it runs the attempts `shard_of` puts in `index`."""

    index: int
    count: int

    def holds(self, model: str, case_id: str, attempt: int) -> bool:
        return shard_of(model, case_id, attempt, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> Shard:
    """`I/K` (0 <= I < K), or `auto/K`: I from JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it in each pod."""
    environ = os.environ if environ is None else environ
    index_text, slash, count_text = text.strip().partition("/")
    if not slash or not count_text.isdigit() or not 1 <= int(count_text) <= MAX_SHARDS:
        raise ConfigError(f"--shard takes I/K or auto/K with K between 1 and {MAX_SHARDS}, got {text!r}")
    count = int(count_text)
    if index_text == "auto":
        found = environ.get(INDEX_VARIABLE)
        if found is None or not found.strip():
            raise ConfigError(f"--shard auto/{count} reads {INDEX_VARIABLE}, which is not set (a Kubernetes Indexed Job sets it); give --shard I/{count}")
        if not found.strip().isdigit() or not int(found) < count:
            raise ConfigError(f"--shard auto/{count}: {INDEX_VARIABLE}={found[:20]!r} is not a shard index from 0 to {count - 1}")
        return Shard(int(found), count)
    if not index_text.isdigit() or not int(index_text) < count:
        raise ConfigError(f"--shard {text}: the shard index must be a number from 0 to {count - 1}")
    return Shard(int(index_text), count)


def plan_identity(plan: RunPlan, count: int) -> dict[str, Any]:
    """What every shard of one plan must agree on (JSON-ready), derived from its run plan; two shards with different
    identities never merge."""
    # only when they differ from the default, so identities from before the judge's policy and repeats stay
    judge = ({} if plan.judge_gates else {"judge_gates": False}) | ({} if plan.judge_repeats == 1 else {"judge_repeats": plan.judge_repeats})
    return {
        **judge,
        "kind": plan.kind,
        "golden_hash": plan.golden_hash,
        "models": [model_parameters(model) for model in plan.models],
        "runs": plan.runs,
        "judge": model_parameters(plan.judge) if plan.judge is not None else None,
        "rubric_sha256": plan.rubric_sha256,
        "catalog": catalog_json(plan.catalog),
        "max_steps": plan.max_steps,
        "fault_timeout_s": plan.fault_timeout_s,
        "evalcore_version": plan.evalcore_version,
        "server_fingerprint": plan.server_fingerprint,
        "run_date": plan.run_date,
        "max_drop": plan.max_drop,
        "max_error_rate": plan.max_error_rate,
        "shards": count,
    }


def plan_id(identity: Mapping[str, Any]) -> str:
    """A short name for a plan (its identity's sha256), so shard files of two plans in one folder never collide."""
    return hashlib.sha256(canonical_json(dict(identity)).encode("utf-8")).hexdigest()[:12]


def shard_file_name(identity: Mapping[str, Any], shard: Shard) -> str:
    width = len(str(shard.count - 1))
    return f"shard-{plan_id(identity)}-{shard.index:0{width}d}-of-{shard.count}.parquet"


def differing_keys(one: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """The identity keys whose values differ (a key only one side has counts too)."""
    return sorted(key for key in set(one) | set(other) if one.get(key) != other.get(key))
